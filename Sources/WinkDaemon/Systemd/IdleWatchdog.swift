import Dispatch
import Foundation
import Synchronization

/// Keeps systemd's watchdog (`WatchdogSec=`) fed while winkd has nothing to stream.
///
/// While frames flow, the frame loop proves it is alive by calling `SystemdNotifier.watchdogIfDue()` per
/// frame; a stuck capture or tracker then misses its pings and systemd restarts the service. While no
/// client is connected there are no frames, so this timer pings every `watchdogInterval` instead, but only
/// while `isIdle` is true: the moment streaming begins, the frame loop is on its own again.
///
/// Thread-safe: `isIdle` may be set from any thread. The timer runs on its own dispatch queue until
/// `cancel()` or deinit.
public final class IdleWatchdog: @unchecked Sendable {
    private let notifier: SystemdNotifier
    private let timer: DispatchSourceTimer
    private let idle = Mutex(true)

    /// Starts the timer, idle; nil when `notifier` is nil or its watchdog is off (nothing to feed).
    public init?(notifier: SystemdNotifier?) {
        guard let notifier, let interval = notifier.watchdogInterval else { return nil }
        self.notifier = notifier
        let (seconds, attoseconds) = interval.components
        let nanoseconds = max(1_000_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "winkd.idle-watchdog"))
        timer.schedule(deadline: .now(), repeating: .nanoseconds(nanoseconds), leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self, self.isIdle else { return }
            self.notifier.watchdog()
        }
        timer.resume()
    }

    /// True while the daemon waits for clients (the timer pings); false while the frame loop runs (it pings).
    public var isIdle: Bool {
        get { idle.withLock { $0 } }
        set { idle.withLock { $0 = newValue } }
    }

    /// Stops the timer for good.
    public func cancel() { timer.cancel() }

    deinit { timer.cancel() }
}
