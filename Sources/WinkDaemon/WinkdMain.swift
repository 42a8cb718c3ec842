import Capture
import Dispatch
import EventServer
import Foundation
import Synchronization
import WinkCore

/// `winkd`: the daemon's entry point. Logs to stderr with syslog `<N>` priority prefixes for journald (none
/// on a terminal), from `--log-level` / `logLevel` up (`DaemonLog`).
public enum WinkdMain {
    /// Runs winkd. `observer` receives the daemon's READY/STATUS/WATCHDOG/RELOADING/STOPPING moments (for
    /// sd_notify, see `DaemonObserver`).
    public static func run(observer: DaemonObserver? = nil) -> Never {
        signal(SIGPIPE, SIG_IGN)
        limitStillImageSize()
        runMain("winkd") {
            let argv = Array(CommandLine.arguments.dropFirst())
            if Arguments.asksForHelp(argv) {
                print(DaemonOptions.spec.help(program: ""))
                return .ok
            }
            var args = Arguments(argv, spec: DaemonOptions.spec)
            if args.flag("--version") {
                print("winkd \(WinkVersion.current)")
                return .ok
            }
            let options = try DaemonOptions(&args)
            if options.printConfiguration {
                _ = try options.configuration.applyingProfile()  // as start-up would: 66 missing, 78 corrupt
                _ = try Daemon.loadRenderer(options.configuration)  // and a missing or bad overlay layout, 78
                print(ConfigurationReport(configuration: options.configuration, request: options.request,
                                          logLevelFlag: options.logLevel).text(), terminator: "")
                return .ok
            }
            let logger = DaemonLog(threshold: options.effectiveLogLevel, prefixed: DaemonLog.usesPrefixes())
            // SIGTERM, SIGINT and SIGHUP are taken by dispatch sources, which libdispatch sets up later, on its
            // manager thread (a signalfd and a handler of its own). Until then a signal set to SIG_IGN is
            // discarded by the kernel, and that moment can come after the socket accepts clients: a SIGHUP or
            // SIGTERM sent as soon as a client got in was lost in one start in five to one in three. A blocked
            // signal is never discarded: it stays pending until the signalfd reads it. So block these three
            // in this thread before any other exists (threads inherit the mask; libdispatch's own threads
            // block every signal), and unblock the rest, which a parent may have left blocked.
            let handled = [SIGTERM, SIGINT, SIGHUP]
            for sig in handled { signal(sig, SIG_IGN) }
            var mask = sigset_t()
            sigemptyset(&mask)
            for sig in handled { sigaddset(&mask, sig) }
            pthread_sigmask(SIG_SETMASK, &mask, nil)
            // SIGTERM/SIGINT: stop, also while the model loads.
            for sig in [SIGTERM, SIGINT] {
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler {
                    // While the model loads there is no daemon yet, but the socket may already serve
                    // clients: they get bye and the socket file goes. Before the socket exists, the stop is
                    // noted and carried out the moment it does (`serverListening`).
                    let (daemon, server) = current.withLock { daemon -> (Daemon?, EventServer?) in
                        if daemon == nil { starting.stopRequested = true }
                        return (daemon, starting.server)
                    }
                    guard let daemon else {
                        guard let server else { return }
                        stopWhileStarting(server, observer: observer)
                    }
                    observer?.daemonIsStopping()
                    daemon.requestStop()
                    // A source blocked in a read must not delay the exit: give the loop 1.5 s, then leave.
                    DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) {
                        daemon.shutdown(reason: "shutdown")
                        leave()
                    }
                }
                source.resume()
                signalSources.append(source)
            }
            // SIGHUP: reload the configuration file and overlay layout between two frames.
            let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
            // A SIGHUP while the daemon is still starting (loading the model) is kept and carried out once
            // it runs: the file may have changed after start-up read it.
            hangup.setEventHandler {
                let daemon = current.withLock { daemon -> Daemon? in
                    if daemon == nil { reloadWhileStarting.withLock { $0 = true } }
                    return daemon
                }
                daemon?.requestReload()
            }
            hangup.resume()
            signalSources.append(hangup)
            let daemon = try Daemon(options: options, observer: observer, serverListening: { server in
                let stop = current.withLock { _ -> Bool in
                    starting.server = server
                    return starting.stopRequested
                }
                if stop { stopWhileStarting(server, observer: observer) }
            }) { level, message in
                logger.write(level, message)
            }
            current.withLock {
                $0 = daemon
                starting.server = nil
            }
            if reloadWhileStarting.withLock({ $0 }) { daemon.requestReload() }
            return daemon.run()
        }
    }

    /// A SIGTERM or SIGINT before the daemon exists (the model loading): clients that connected meanwhile
    /// get `{"type":"bye","reason":"shutdown"}`, the socket file is removed, and winkd exits 0.
    private static func stopWhileStarting(_ server: EventServer, observer: DaemonObserver?) -> Never {
        observer?.daemonIsStopping()
        server.stop(reason: "shutdown")
        leave()
    }

    /// Ends the process at once with 0 from a signal handler's thread, while the main thread may still be
    /// inside dlib or OpenCV (loading the model, processing a frame): `_exit`, not `exit`, which would run
    /// the C++ static destructors and atexit handlers under the working thread's feet. A SIGTERM during
    /// start-up crashed winkd with SIGSEGV that way in about one start in 40 on a loaded machine. Nothing
    /// is lost: clients have had `bye`, the socket file is gone, and stderr is unbuffered.
    private static func leave() -> Never {
        _exit(0)
    }

    nonisolated(unsafe) static var signalSources: [DispatchSourceSignal] = []
    static let current = Mutex<Daemon?>(nil)
    /// The socket while the daemon starts, and whether a stop came meanwhile; guarded with `current`'s lock.
    nonisolated(unsafe) static var starting: (server: EventServer?, stopRequested: Bool) = (nil, false)
    /// A SIGHUP came before `current` was set (guarded with `current`'s lock held, so none is lost).
    static let reloadWhileStarting = Mutex(false)
}
