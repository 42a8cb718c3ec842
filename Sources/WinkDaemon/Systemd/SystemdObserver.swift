import EventServer
import Foundation
import Synchronization
import WinkCore

/// Connects the daemon's lifecycle hooks to systemd's notification protocol (sd_notify(3)): READY once
/// the socket accepts and the model is loaded, STATUS for every status line, paced WATCHDOG pings from the
/// processing thread, RELOADING/READY around a SIGHUP reload, STOPPING on shutdown.
///
/// Thread-safe: `SystemdNotifier` sends one non-blocking datagram per call.
public final class SystemdObserver: DaemonObserver {
    let notifier: SystemdNotifier
    /// What the source is doing, how many clients listen, and the last reload's or overlay output's news,
    /// for STATUS ("streaming /dev/video0, 2 clients; reload ok /etc/winkd/config.json: configuration
    /// reloaded"). The news is dropped when the source's state changes.
    private let state = Mutex<(activity: String, clients: Int, note: String?)>(("idle, source closed", 0, nil))

    private static func line(_ s: (activity: String, clients: Int, note: String?)) -> String {
        "\(s.activity), \(s.clients) client\(s.clients == 1 ? "" : "s")" + (s.note.map { "; \($0)" } ?? "")
    }
    private let stoppingSent = Mutex(false)

    /// `nil` when the daemon does not run under systemd (`NOTIFY_SOCKET` unset).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let notifier = SystemdNotifier(environment: environment) else { return nil }
        self.notifier = notifier
    }

    /// `READY=1` with a STATUS naming the socket (or "an inherited socket").
    public func daemonIsReady(socketPath: String?) {
        notifier.ready(status: "idle, listening on \(socketPath ?? "an inherited socket"), source closed")
    }

    /// `STATUS=` for the line (its state, source and message) and the client count.
    public func daemonPublished(status: StatusLine) {
        var text: String
        switch status.state {
        case .sourceOpened, .cameraLight: text = "streaming \(status.source ?? "")"  // light: the picture is back
        case .sourceClosed: text = "idle, source closed"
        default:
            text = status.state.rawValue.replacingOccurrences(of: "_", with: " ")
            if let source = status.source { text += " \(source)" }
            if let message = status.message { text += ": \(message)" }
        }
        // A reload's news rides after the source's state: STATUS said "reload ok ..." while a camera streamed.
        let line = state.withLock { s in
            if status.state.concernsTheSource {
                s.activity = text
                s.note = nil
            } else {
                s.note = text
            }
            return Self.line(s)
        }
        notifier.status(line)
    }

    /// `STATUS=` with the new client count.
    public func daemonClientsChanged(count: Int) {
        let line = state.withLock { s in
            s.clients = count
            return Self.line(s)
        }
        notifier.status(line)
    }

    /// `WATCHDOG=1`, at most as often as the notifier's pacing allows.
    public func daemonIsAlive() { notifier.watchdogIfDue() }

    /// `RELOADING=1` with `MONOTONIC_USEC` (`CLOCK_MONOTONIC`, microseconds).
    public func daemonIsReloading() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        notifier.send("RELOADING=1\nMONOTONIC_USEC=\(UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000)")
    }

    /// `READY=1` with the STATUS the reload left: the source's state, then the reload's own status line
    /// (`reload_ok`/`reload_failed`, published just before: "streaming /dev/video0, 2 clients; reload failed
    /// /etc/winkd/config.json: ..."). It said "configuration reloaded" alone, and the next status line put
    /// "reload ok ..." in the source's place for as long as the camera streamed.
    public func daemonDidReload(ok: Bool) {
        notifier.ready(status: state.withLock { Self.line($0) })
    }

    /// STOPPING=1 once: a SIGTERM and the run loop ending after it both report the stop.
    public func daemonIsStopping() {
        guard stoppingSent.withLock({ sent in defer { sent = true }; return !sent }) else { return }
        notifier.stopping(status: "stopping")
    }
}
