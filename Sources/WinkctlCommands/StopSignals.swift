import Glibc
import WinkCore

/// The signal (SIGINT, SIGTERM, SIGHUP) that asked a long command to stop, 0 until one did.
private var caughtStopSignal: sig_atomic_t = 0

/// A stop asked of a command that works frame by frame (`winkctl overlay`, `winkctl analyze`): the signal is
/// caught, and the command polls `StopSignals.caught` once a frame, so it can keep what it has done (the lines
/// printed so far) or undo it (a partly written output) before exiting 128 + the signal, as if killed by it.
///
/// Not thread-safe to `install` from several threads; `caught` may be read from any thread.
enum StopSignals {
    /// The signals caught: Ctrl-C, `kill`, a closed terminal.
    static let numbers: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Catches SIGINT, SIGTERM and SIGHUP from now on, and unblocks them: a parent's blocked mask is inherited
    /// (a test runner's thread), and a blocked SIGINT would let the run finish as if nothing had been asked.
    static func install() {
        var stops = sigset_t()
        sigemptyset(&stops)
        for number in numbers {
            signal(number) { caughtStopSignal = $0 }
            sigaddset(&stops, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &stops, nil)
    }

    /// The signal caught since `install`, or nil.
    static var caught: Int32? { caughtStopSignal != 0 ? caughtStopSignal : nil }

    /// "SIGINT", "SIGTERM" or "SIGHUP" (else "signal N"), for the line that says the command stopped.
    static func name(_ number: Int32) -> String {
        [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP"][number] ?? "signal \(number)"
    }
}
