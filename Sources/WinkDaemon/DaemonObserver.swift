import Capture
import EventServer
import Foundation
import WinkCore

/// Hooks for a service manager (systemd's sd_notify) and for tests: what the daemon is doing, as it happens.
///
/// Every method has an empty default. Calls come from the daemon's processing thread, except
/// `daemonPublished(status:)`, which also comes from the capture thread, and `daemonClientsChanged`, which
/// comes from the socket server's thread: implementations must be thread-safe and quick (no blocking I/O
/// beyond one datagram).
///
/// Where sd_notify messages belong:
/// - `daemonIsReady` -> `READY=1` (the socket listens and the model is loaded),
/// - `daemonPublished(status:)` -> `STATUS=<state>: <message>`,
/// - `daemonIsAlive` -> `WATCHDOG=1` (called at least once a second while the processing thread runs,
///   often many times a second: rate-limit to `WATCHDOG_USEC / 2`),
/// - `daemonIsReloading` -> `RELOADING=1` + `MONOTONIC_USEC=...`, `daemonDidReload` -> `READY=1`,
/// - `daemonIsStopping` -> `STOPPING=1`.
public protocol DaemonObserver: AnyObject, Sendable {
    /// The socket listens (clients may connect) and the model is loaded.
    /// - Parameter socketPath: the bound path, nil for an inherited (socket-activated) socket.
    func daemonIsReady(socketPath: String?)
    /// A status line was sent to every client (e.g. `camera_busy`, `camera_dark`, `reload_ok`).
    func daemonPublished(status: StatusLine)
    /// An expression event was sent to the clients subscribed to it.
    func daemonPublished(event: ExpressionEvent)
    /// The number of connected clients changed (called on the socket server's thread).
    func daemonClientsChanged(count: Int)
    /// The processing thread is alive (watchdog keep-alive).
    func daemonIsAlive()
    /// A SIGHUP reload starts.
    func daemonIsReloading()
    /// A reload ended; `ok` false when the old configuration was kept.
    func daemonDidReload(ok: Bool)
    /// The daemon is stopping (clients are about to get `bye`).
    func daemonIsStopping()
}

extension DaemonObserver {
    /// Does nothing.
    public func daemonIsReady(socketPath: String?) {}
    /// Does nothing.
    public func daemonPublished(status: StatusLine) {}
    /// Does nothing.
    public func daemonPublished(event: ExpressionEvent) {}
    /// Does nothing.
    public func daemonClientsChanged(count: Int) {}
    /// Does nothing.
    public func daemonIsAlive() {}
    /// Does nothing.
    public func daemonIsReloading() {}
    /// Does nothing.
    public func daemonDidReload(ok: Bool) {}
    /// Does nothing.
    public func daemonIsStopping() {}
}

/// What the daemon reaches outside itself for cameras and the overlay output, and its fault timings:
/// replaceable so tests can hand it a `V4L2Camera` over a scripted device and short intervals.
public struct DaemonEnvironment: @unchecked Sendable {
    /// Opens a camera at a path with settings, in colour when asked (`V4L2Camera` by default).
    /// - Throws: `CaptureError` as `V4L2Camera.init` (the source's own errors for a fake).
    public var openCamera: (_ path: String, _ settings: V4L2Camera.Settings, _ wantsColor: Bool) throws -> FrameSource
    /// The camera to use without `--source` (`V4L2Discovery.defaultDevice()`).
    /// - Throws: `CaptureError` `.noDevice` when there is none.
    public var defaultCamera: () throws -> String
    /// Whether a camera name (a `/dev/v4l/by-id` link or node) exists now (`V4L2Discovery.currentPath(of:)`).
    public var cameraIsPresent: (String) -> Bool
    /// Opens the overlay output device at a frame size in pixels (`V4L2Output` by default).
    /// - Throws: `CaptureError` as `V4L2Output.init` (exit 66 or 69).
    public var openOutput: (_ path: String, _ width: Int, _ height: Int) throws -> V4L2Output

    /// Seconds before the first retry of a busy or failing camera; doubled up to `backoffMaximum`.
    public var backoffInitial = 1.0
    /// Seconds: the longest wait between retries.
    public var backoffMaximum = 10.0
    /// Seconds between looks for an absent or unplugged camera while clients are connected.
    public var absentPollInterval = 2.0
    /// Seconds without a frame after which the camera is closed and opened again.
    public var stallSeconds = 2.0
    /// Longest single wait for a frame, in seconds: how quickly the capture thread notices a stop.
    public var readSlice = 0.25
    /// Seconds of dark or blank frames (`FrameUsability`) before `camera_dark` or `capture_blank`.
    public var darkSeconds = 1.0
    /// Least seconds between two `camera_corrupt_frames` status lines.
    public var corruptReportInterval = 10.0
    /// Clock for stalls, lingering and pacing.
    public var clock: any MonotonicClock = SystemClock()

    /// An environment with these hooks and the default timings.
    public init(openCamera: @escaping (String, V4L2Camera.Settings, Bool) throws -> FrameSource,
                defaultCamera: @escaping () throws -> String,
                cameraIsPresent: @escaping (String) -> Bool,
                openOutput: @escaping (String, Int, Int) throws -> V4L2Output) {
        self.openCamera = openCamera
        self.defaultCamera = defaultCamera
        self.cameraIsPresent = cameraIsPresent
        self.openOutput = openOutput
    }

    /// Real cameras through libv4l2, real output devices.
    public static var system: DaemonEnvironment {
        DaemonEnvironment(
            openCamera: { path, settings, color in try V4L2Camera(path: path, settings: settings, wantsColor: color) },
            defaultCamera: { try V4L2Discovery.defaultDevice() },
            cameraIsPresent: { V4L2Discovery.currentPath(of: $0) != nil },
            openOutput: { path, width, height in try V4L2Output(path: path, width: width, height: height) })
    }
}
