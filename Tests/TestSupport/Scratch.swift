import Foundation
import Glibc

/// Scratch space for the tests, removed when the test process ends.
///
/// Every file and folder a test makes goes in one root folder of its process, `winkd-tests-<pid>-XXXXXX` in
/// the system's temporary directory (`$TMPDIR`, else `/tmp`): made on first use and removed, with everything
/// under it, when the process exits normally (an atexit(3) hook). A test may still remove what it made as soon
/// as it is done; whatever it leaves (a test that failed half-way, a socket a daemon left bound, a folder a
/// child process wrote into) goes with the root. A process killed by a signal or crashing leaves its root
/// behind, and its name says which process it was.
///
/// Thread-safe: the tests run in parallel; each call gives a folder of its own (mkdtemp(3)), and the root is
/// made once whichever test asks first.
///
/// The root and its folders are 0755, as FileManager makes folders under the usual umask: a child process a
/// test runs as another user (`nobody`) may reach its folder. The root's name is kept short for the Unix
/// sockets the tests bind in it: `sun_path` holds 108 bytes.
public enum Scratch {
    /// The process's root, removed at exit.
    static let shared: ScratchRoot = {
        let root = ScratchRoot(in: FileManager.default.temporaryDirectory.path, prefix: "winkd-tests-\(getpid())-")
        atexit { Scratch.shared.removeAll() }
        return root
    }()

    /// A fresh empty folder `<prefix>-XXXXXX` in the process's scratch root (made if need be).
    /// - Throws: `POSIXError` when a folder cannot be made.
    public static func directory(_ prefix: String) throws -> URL { try shared.directory(prefix) }

    /// A path for a file called `name`, in a fresh folder of its own so that the name is kept as given; the
    /// file is not made.
    /// - Throws: `POSIXError` when the folder cannot be made.
    public static func file(_ name: String) throws -> URL { try shared.directory("f").appendingPathComponent(name) }
}

/// One scratch root: a folder `<parent>/<prefix>XXXXXX` made on first use, the folders handed out in it, and
/// its removal. `Scratch` holds the process's; the tests of this type make their own.
final class ScratchRoot: @unchecked Sendable {
    private let parent: String
    private let prefix: String
    /// The process that made this root: a child forked from it (and exiting through atexit) leaves it alone.
    private let owner = getpid()
    private let lock = NSLock()
    /// The root, once made; guarded by `lock`.
    private var made: String?

    init(in parent: String, prefix: String) {
        self.parent = parent.hasSuffix("/") ? String(parent.dropLast()) : parent
        self.prefix = prefix
    }

    /// The root folder, made on the first call.
    func path() throws -> String {
        try lock.withLock {
            if let made { return made }
            let path = try Self.makeDirectory(parent + "/" + prefix)
            made = path
            return path
        }
    }

    /// A fresh empty folder `<prefix>-XXXXXX` in the root.
    func directory(_ prefix: String) throws -> URL {
        URL(fileURLWithPath: try Self.makeDirectory(try path() + "/" + prefix + "-"), isDirectory: true)
    }

    /// Removes the root and everything under it (the atexit hook's work); a later `directory(_:)` makes a new
    /// root. Nothing is done if the root was never made, or in a process other than the one that made it.
    func removeAll() {
        guard getpid() == owner else { return }
        let root: String? = lock.withLock {
            defer { made = nil }
            return made
        }
        if let root { Self.remove(root) }
    }

    /// mkdtemp(3) on `template` + `XXXXXX`, then made 0755 (mkdtemp's is 0700): the folder's path.
    private static func makeDirectory(_ template: String) throws -> String {
        var bytes = Array((template + "XXXXXX").utf8CString)
        guard let made = bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        let path = String(cString: made)
        guard chmod(path, 0o755) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return path
    }

    /// Removes `path` and whatever is under it, without following symbolic links (a link's target outside
    /// stays). A folder is made writable first (a test may leave one read-only: root ignores that, other users
    /// do not), and a file system a test left mounted on one (`TinyDisk`) is detached.
    static func remove(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            unlink(path)
            return
        }
        chmod(path, 0o700)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            remove(path + "/" + name)
        }
        if rmdir(path) != 0 && errno == EBUSY && umount2(path, Int32(MNT_DETACH)) == 0 {
            rmdir(path)
        }
    }
}
