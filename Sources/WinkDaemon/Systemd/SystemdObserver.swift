import EventServer
import Foundation
import WinkCore

/// Connects the daemon's lifecycle hooks to systemd's notification protocol (sd_notify(3)): READY once
/// the socket accepts and the model is loaded, STATUS for every status line, paced WATCHDOG pings from the
/// processing thread, RELOADING/READY around a SIGHUP reload, STOPPING on shutdown.
///
/// Thread-safe: `SystemdNotifier` sends one non-blocking datagram per call.
public final class SystemdObserver: DaemonObserver {
    let notifier: SystemdNotifier

    /// `nil` when the daemon does not run under systemd (`NOTIFY_SOCKET` unset).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let notifier = SystemdNotifier(environment: environment) else { return nil }
        self.notifier = notifier
    }

    public func daemonIsReady(socketPath: String?) {
        notifier.ready(status: "idle, listening on \(socketPath ?? "an inherited socket"), camera closed")
    }

    public func daemonPublished(status: StatusLine) {
        var text = status.state.replacingOccurrences(of: "_", with: " ")
        if let source = status.source { text += " \(source)" }
        if let message = status.message { text += ": \(message)" }
        notifier.status(text)
    }

    public func daemonIsAlive() { notifier.watchdogIfDue() }

    public func daemonIsReloading() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        notifier.send("RELOADING=1\nMONOTONIC_USEC=\(UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000)")
    }

    public func daemonDidReload(ok: Bool) {
        notifier.ready(status: ok ? "configuration reloaded" : "reload failed; the previous configuration stays")
    }

    public func daemonIsStopping() { notifier.stopping(status: "stopping") }
}
