import Foundation

/// What winkd is doing, as the one-line `STATUS=` text `systemctl status` shows (sd_notify(3)), e.g.
/// "streaming /dev/video0 640x480@30, 2 clients". A value type with no I/O; send its `description` with
/// `SystemdNotifier.status(_:)`.
public struct ServiceStatus: Equatable, Sendable, CustomStringConvertible {
    /// The source's state.
    public enum Activity: Equatable, Sendable {
        /// No client wants events; the camera or file is closed.
        case idle
        /// The source (a device path or file) is being opened.
        case opening(source: String)
        /// Frames flow: `width` x `height` pixels at `framesPerSecond` (nil when the source does not say).
        case streaming(source: String, width: Int, height: Int, framesPerSecond: Double?)
        /// Shutting down.
        case stopping
    }

    /// What the source is doing.
    public var activity: Activity
    /// Connected event clients.
    public var clients: Int

    /// A status of `activity` with `clients` connected.
    public init(_ activity: Activity, clients: Int) {
        self.activity = activity
        self.clients = clients
    }

    /// E.g. "idle, source closed, 0 clients", "opening /dev/video0, 1 client",
    /// "streaming /dev/video0 640x480@30, 2 clients", "streaming clip.mp4 1280x720@29.97, 1 client",
    /// "stopping, 2 clients".
    public var description: String {
        let count = "\(clients) client\(clients == 1 ? "" : "s")"
        switch activity {
        case .idle:
            return "idle, source closed, \(count)"
        case .opening(let source):
            return "opening \(source), \(count)"
        case .streaming(let source, let width, let height, let fps):
            let rate = fps.map { "@" + Self.rate($0) } ?? ""
            return "streaming \(source) \(width)x\(height)\(rate), \(count)"
        case .stopping:
            return "stopping, \(count)"
        }
    }

    /// A frame rate with at most two decimals and no trailing zeros: 30, 29.97, 7.5.
    static func rate(_ fps: Double) -> String {
        guard fps.isFinite, fps > 0 else { return "?" }
        let hundredths = (fps * 100).rounded()
        if hundredths.truncatingRemainder(dividingBy: 100) == 0 { return String(Int(hundredths / 100)) }
        var text = String(format: "%.2f", hundredths / 100)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
