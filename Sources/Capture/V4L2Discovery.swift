import Foundation
import WinkCore

#if canImport(Glibc)
    import Glibc
#endif

/// A V4L2 video capture node and what it offers.
public struct V4L2DeviceDescription: Hashable, Sendable {
    /// The device node, e.g. `/dev/video0`.
    public var path: String
    /// The stable udev name pointing at it, e.g. `/dev/v4l/by-id/usb-046d_C920_ABCD-video-index0`.
    public var stableName: String?
    /// Driver, card and bus from `VIDIOC_QUERYCAP`.
    public var capability: V4L2Capability
    /// Formats with sizes and rates (empty when discovery was asked not to enumerate them).
    public var formats: [V4L2FormatOffer]

    /// A description of the node at `path`.
    public init(path: String, stableName: String?, capability: V4L2Capability, formats: [V4L2FormatOffer]) {
        self.path = path
        self.stableName = stableName
        self.capability = capability
        self.formats = formats
    }

    /// The name to open and to show: the stable name when there is one, else the node.
    public var preferredName: String { stableName ?? path }
}

/// What discovery found: capture devices, and nodes that could not be examined.
public struct V4L2DeviceList: Sendable {
    /// Capture-capable nodes in `/dev/videoN` order (metadata and output nodes left out).
    public var devices: [V4L2DeviceDescription]
    /// Nodes that could not be opened or queried (e.g. no permission), each a one-line error.
    public var problems: [CaptureError]

    /// A list of `devices` and the `problems` met finding them.
    public init(devices: [V4L2DeviceDescription], problems: [CaptureError] = []) {
        self.devices = devices
        self.problems = problems
    }
}

/// Finds V4L2 capture devices under `/dev` and maps them to their stable `/dev/v4l/by-id` names.
public enum V4L2Discovery {
    /// Lists capture devices: every `videoN` node in `devDirectory` (sorted by N) that reports
    /// `V4L2_CAP_VIDEO_CAPTURE`, named by the `v4l/by-id` symlink that resolves to it when there is one.
    /// - Parameters:
    ///   - devDirectory: where the nodes live (`/dev`; a test directory in tests).
    ///   - includeFormats: also enumerate formats, sizes and frame intervals of each device.
    /// - Returns: the devices, and one `CaptureError` for each node that could not be examined. A node
    ///   busy streaming elsewhere can still be queried, so it is listed.
    public static func captureDevices(
        devDirectory: String = "/dev", includeFormats: Bool = true,
        syscalls: any V4L2Syscalls = LibV4L2Syscalls()
    ) -> V4L2DeviceList {
        let stable = stableNames(devDirectory: devDirectory)
        var list = V4L2DeviceList(devices: [], problems: [])
        for node in videoNodes(devDirectory: devDirectory) {
            let fd: Int32
            do {
                fd = try retryingOnInterrupt { () throws(Errno) in try syscalls.open(node) }
            } catch {
                list.problems.append(V4L2Camera.error(error, path: node, during: "open", access: syscalls.deviceAccess))
                continue
            }
            defer { syscalls.close(fd) }
            do {
                let capability = try retryingOnInterrupt { () throws(Errno) in try syscalls.queryCapability(fd) }
                guard capability.nodeCapabilities.contains(.videoCapture) else { continue }
                let formats = includeFormats ? try V4L2FormatOffer.enumerate(fd, syscalls: syscalls) : []
                list.devices.append(
                    V4L2DeviceDescription(
                        path: node, stableName: stable[canonicalPath(node) ?? node],
                        capability: capability, formats: formats))
            } catch {
                list.problems.append(
                    V4L2Camera.error(error, path: node, during: "VIDIOC_QUERYCAP", access: syscalls.deviceAccess))
            }
        }
        return list
    }

    /// The camera winkd opens when no `--source` is given: the first capture device, by its stable name
    /// when it has one.
    /// - Throws: `CaptureError` `.noDevice` (exit 69) when there is no capture device; when nodes exist but
    ///   none could be examined, the first node's error instead (e.g. `.unreadable`, permission denied).
    public static func defaultDevice(
        devDirectory: String = "/dev",
        syscalls: any V4L2Syscalls = LibV4L2Syscalls()
    ) throws -> String {
        let list = captureDevices(devDirectory: devDirectory, includeFormats: false, syscalls: syscalls)
        if let first = list.devices.first { return first.preferredName }
        if let problem = list.problems.first { throw problem }
        throw CaptureError(
            .noDevice, subject: "\(devDirectory)/video*",
            reason: "no V4L2 capture device found (is a camera plugged in?)")
    }

    /// The device node a name currently resolves to (`/dev/v4l/by-id/...` -> `/dev/videoN`, following
    /// every symlink), or nil while it is absent: for reopening a camera after it was unplugged.
    public static func currentPath(of name: String) -> String? {
        canonicalPath(name)
    }

    /// `videoN` nodes in `devDirectory`, sorted by N.
    static func videoNodes(devDirectory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: devDirectory)) ?? []
        let numbered: [(Int, String)] = names.compactMap { name in
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
            return (n, name)
        }
        return numbered.sorted { $0.0 < $1.0 }.map { "\(devDirectory)/\($0.1)" }
    }

    /// Canonical node path -> `v4l/by-id` symlink path. When several names point at one node, the
    /// alphabetically first wins.
    static func stableNames(devDirectory: String) -> [String: String] {
        let byID = "\(devDirectory)/v4l/by-id"
        let links = ((try? FileManager.default.contentsOfDirectory(atPath: byID)) ?? []).sorted()
        var map: [String: String] = [:]
        for link in links {
            let path = "\(byID)/\(link)"
            if let target = canonicalPath(path), map[target] == nil { map[target] = path }
        }
        return map
    }

    /// `realpath(3)`: the absolute path with every symlink resolved; nil when it does not exist.
    static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
