import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A 200 KiB tmpfs mounted in a temporary folder: a full disk without filling a real one. Needs root (the
/// tests run as root here and in CI); where mounting is refused, `available` is false and the tests using it
/// are skipped, saying why (`unavailableReason`).
public struct TinyDisk {
    /// The mounted folder.
    public let path: String

    /// Whether a tmpfs can be mounted here (tried once).
    public static let available: Bool = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tinydisk-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) != nil else {
            return false
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let disk = try? TinyDisk(in: folder) else { return false }
        disk.unmount()
        return true
    }()
    public static let unavailableReason = "mounting a 200 KiB tmpfs was refused (not root?): full-disk tests skipped"

    public struct MountRefused: Error {}

    /// Mounts the tmpfs at `folder/disk`.
    /// - Throws: `MountRefused` when mount(8) fails, or the folder's creation error.
    public init(in folder: URL) throws {
        path = folder.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.command("/bin/mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", path]) == 0 else {
            throw MountRefused()
        }
    }

    /// Writes a file until the disk is full.
    public func fill() {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
    }

    public func unmount() { _ = Self.command("/bin/umount", [path]) }

    static func command(_ program: String, _ arguments: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}
