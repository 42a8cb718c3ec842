import Capture
import EventServer
import Foundation
import WinkCore

/// One kind of source the daemon streams from while clients listen: a camera (`CameraSession`) or a
/// recording (`FileSession`). A new capture backend is one more conforming type.
///
/// A session reports its source's state as `status` lines (`StatusState`) through its host's
/// `FramePublisher`, and publishes each frame there. Used from the daemon's processing thread only.
protocol SourceSession: AnyObject {
    /// Opens the source and streams until nobody has listened for the linger time, a stop is requested, a
    /// reload needs the source opened again, or the source ends; a source that fails is reported, waited
    /// for (with backoff) and, on the next call, tried again.
    /// - Returns: `.endOfInput` when a recording played to its end (and is not looped), else `.idle`.
    func run() -> SessionEnd
}

/// Why `SourceSession.run()` returned.
enum SessionEnd: Equatable {
    /// Demand ended, or the source failed and was waited for; the daemon waits for demand and runs again.
    case idle
    /// A recording ended: the daemon says `bye` (`end_of_input`) and exits 0.
    case endOfInput
}

/// What a session needs of the daemon. Members are used on the processing thread unless said otherwise.
protocol SessionHost: AnyObject, Sendable {
    /// Cameras, output device, fault timings and clock.
    var environment: DaemonEnvironment { get }
    /// Stop and demand, under the lock sessions wait on (thread-safe).
    var signals: DaemonSignals { get }
    /// Where frames and status lines go.
    var publisher: FramePublisher { get }
    /// The camera settings in use; thread-safe (the capture thread reads them when it opens the camera).
    var cameraSettings: V4L2Camera.Settings { get }
    /// Between two frames: feeds the watchdog and applies a requested reload.
    /// - Parameter idleSince: when the last client left, kept by the caller across calls.
    /// - Returns: false once a stop is requested or nobody has listened for the linger time.
    func keepStreaming(idleSince: inout UInt64?) -> Bool
}

/// The daemon's cross-thread state: the client count, a stop and a reload request, under one condition
/// lock. Sessions keep their own flags under the same lock (`withLock`) and wait on it (`wait`), so a stop
/// or a change of demand wakes every waiting thread at once. Thread-safe.
final class DaemonSignals: @unchecked Sendable {
    private let condition = NSCondition()
    // Under `condition`.
    private var clients = 0
    private var stopping = false
    private var reloadRequested = false

    /// Runs `body` under the lock and wakes every waiter afterwards (a change others wait for).
    func change<T>(_ body: () -> T) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body()
    }

    /// Runs `body` under the lock (a read, or a change nobody waits for).
    func withLock<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Waits up to `seconds`, unless a stop is requested or `done` (evaluated under the lock) holds; returns
    /// early when anything `change`s.
    func wait(seconds: Double, unless done: () -> Bool = { false }) {
        condition.lock()
        if !stopping && !done() { _ = condition.wait(until: Date(timeIntervalSinceNow: seconds)) }
        condition.unlock()
    }

    /// Waits while `condition` holds (evaluated under the lock), until `deadline` at the latest.
    func wait(while holds: () -> Bool, until deadline: Date) {
        condition.lock()
        while holds() && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// Connected clients (as the event server last counted them).
    var clientCount: Int {
        get { withLock { clients } }
        set { change { clients = newValue } }
    }

    /// Whether a stop was requested.
    var stopRequested: Bool { withLock { stopping } }

    /// Asks every loop to end.
    func requestStop() { change { stopping = true } }

    /// Asks for a reload between two frames.
    func requestReload() { change { reloadRequested = true } }

    /// Whether a reload was requested since the last call (and forgets the request).
    func takeReloadRequest() -> Bool {
        withLock {
            defer { reloadRequested = false }
            return reloadRequested
        }
    }

    /// Waits up to a second for demand (a client, or `alwaysOn`), a stop or a reload request.
    /// - Returns: whether there is demand and whether a stop was requested.
    func waitForDemand(alwaysOn: Bool) -> (demand: Bool, stop: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if !stopping && clients == 0 && !alwaysOn && !reloadRequested {
            _ = condition.wait(until: Date(timeIntervalSinceNow: 1))
        }
        return (clients > 0 || alwaysOn, stopping)
    }
}

/// "2 s", "0.25 s".
func formatSeconds(_ s: Double) -> String {
    s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
}
