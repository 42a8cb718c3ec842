import Foundation
import WinkCore
#if canImport(Glibc)
import Glibc
#endif

/// The event socket's server (SPEC.md "The event socket"): accepts clients on a Unix stream socket, greets
/// each with a `hello` line, answers their `subscribe` and `status` requests, and fans published lines out
/// to them. A client's log lines (connected, subscribed, refused requests, dropped lines, closed) are all
/// logged from the server thread, so they come in the order they happened.
///
/// Threading: the server runs one thread of its own (`start()`), a `poll(2)` loop over the listening fd,
/// every client fd (all non-blocking) and a wake pipe. `publish(...)`, `stop(reason:)`
/// and `clientCount` may be called from any thread. Publishing never blocks on a client: a line is encoded
/// once and appended to each interested client's bounded queue under a short lock; the server thread
/// writes. A client whose queue is full loses its oldest lines and later receives
/// `{"type":"dropped","count":N}` where they were; a client that accepts no bytes for
/// `Options.writeTimeout` seconds while data waits for it is disconnected. Callbacks (`onClientCountChange`,
/// the log handler) run on the server thread; they must not call `stop` expecting it to wait.
public final class EventServer: @unchecked Sendable {
    /// Tunables; the defaults suit the daemon.
    public struct Options: Sendable {
        /// Permission bits of the socket file, applied at bind time (0o600 for a per-user socket, 0o660 to
        /// let a group connect).
        public var mode: UInt32 = 0o600
        /// Clients beyond this many get a `too_many_clients` error line instead of `hello`, then the daemon's
        /// state (a `status` line as a request's answer has it, without `id`, with `"full":true`), and are
        /// closed.
        public var maximumClients = 64
        /// Lines queued per client before the oldest are dropped.
        public var queueCapacity = 256
        /// Seconds a client may accept no bytes while data waits for it before it is disconnected.
        public var writeTimeout: Double = 5
        /// Seconds without any line sent to a client after which it gets a `heartbeat` line.
        public var heartbeatInterval: Double = 10
        /// Seconds `stop` spends at most delivering the `bye` lines before closing.
        public var byeGracePeriod: Double = 1
        /// `listen(2)` backlog.
        public var backlog: Int32 = 64
        /// Seconds after which a connected client counts as listening (`listenerCount`, what winkd starts
        /// its source for), unless it subscribed before. `winkctl status` connects, asks and leaves within
        /// milliseconds: it opened the camera, or played a short recording to its end, for nobody.
        public var listenDelay: Double = 0.25
        /// Each client socket's send buffer (`SO_SNDBUF`, which the kernel doubles: 64 KiB); nil keeps the
        /// kernel's default. It holds what a slow client reads late, before it learns of the lines it lost:
        /// Linux's default (212,992 bytes, doubled) held about 1,000 coefficient lines, 35 s of them, and a
        /// slow reader's lines stayed that old. 64 KiB is many times a frame's lines.
        public var sendBufferSize: Int32? = 32768

        /// Options; the times are in seconds. `backlog`, `listenDelay` and `sendBufferSize` keep their defaults
        /// (set them afterwards).
        public init(mode: UInt32 = 0o600, maximumClients: Int = 64, queueCapacity: Int = 256,
                    writeTimeout: Double = 5, heartbeatInterval: Double = 10, byeGracePeriod: Double = 1) {
            self.mode = mode
            self.maximumClients = maximumClients
            self.queueCapacity = queueCapacity
            self.writeTimeout = writeTimeout
            self.heartbeatInterval = heartbeatInterval
            self.byeGracePeriod = byeGracePeriod
        }
    }

    /// Severity of a log message, with syslog(3) priority numbers (journald reads `<N>` prefixes).
    public enum LogLevel: Int, Sendable {
        /// syslog(3)'s `LOG_ERR`, `LOG_WARNING`, `LOG_NOTICE`, `LOG_INFO`, `LOG_DEBUG`.
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }

    /// Receives the server's log messages (client connects with peer credentials, disconnects and why,
    /// protocol errors). Called on the server thread, except the rare "cannot encode" error, which is
    /// reported on the publishing thread.
    public typealias LogHandler = @Sendable (LogLevel, String) -> Void

    /// The socket's path; nil for an inherited socket without a filesystem name.
    public let path: String?
    /// The event names announced in `hello` and accepted in `subscribe` (changed by `announce`).
    public var eventNames: [String] { lock.withLock { announced.names } }
    /// The options the server was created with.
    public let options: Options

    /// Called on the server thread with the new number of listening clients (`listenerCount`) when it
    /// changes: a client that subscribes or stays `Options.listenDelay`, and one of those leaving. May be set
    /// at any time from any thread; a handler set after `start()` should read `clientCount` once, since
    /// earlier changes were reported to the handler before it.
    public var onClientCountChange: (@Sendable (Int) -> Void)? {
        get { lock.withLock { countHandler } }
        set { lock.withLock { countHandler = newValue } }
    }
    private var countHandler: (@Sendable (Int) -> Void)?

    /// What the daemon says about its source in the answer to a client's `status` request: the source's
    /// latest state, its device or file, frames per second, an optional detail.
    public struct SourceReport: Sendable, Equatable {
        /// The source's latest state (`idle` while none is open).
        public var state: StatusState
        /// The device or file configured or open; nil when none.
        public var source: String?
        /// Frames processed per second recently (0 when none came).
        public var fps: Double
        /// A detail for a person, if any.
        public var message: String?

        /// A report; `fps` in frames per second.
        public init(state: StatusState, source: String? = nil, fps: Double = 0, message: String? = nil) {
            self.state = state
            self.source = source
            self.fps = fps
            self.message = message
        }
    }

    /// Called on the server thread for each `status` request, and for each client refused because the
    /// server is full (the state that follows the refusal); its report is answered with the number of
    /// clients and the request's `id`. Without one the answer says `idle`, 0 fps. Must be quick and
    /// thread-safe; may be set at any time from any thread.
    public var sourceReport: (@Sendable () -> SourceReport)? {
        get { lock.withLock { reportHandler } }
        set { lock.withLock { reportHandler = newValue } }
    }
    private var reportHandler: (@Sendable () -> SourceReport)?

    private let log: LogHandler?
    /// Where every socket call goes.
    private let syscalls: any SocketSyscalls
    private let listenFD: Int32
    /// (st_dev, st_ino) of the socket file we bound, to unlink only our own file; nil for inherited fds.
    private let boundIdentity: (dev: UInt64, ino: UInt64)?
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// What `hello` says and `subscribe` accepts; replaced whole by `announce`.
    private struct Announcement {
        var names: [String]
        var known: Set<String>
        var hello: [UInt8]
        init(_ names: [String]) throws {
            // A hello over the line limit would be cut off by clients (SPEC.md: at most 8 KiB a line).
            if let problem = EventNameRules.helloProblem(names) {
                throw EventServerError(.tooManyEvents, subject: "event names", reason: problem)
            }
            self.names = names
            known = Set(names)
            hello = Array(try LineEncoder().line(HelloLine(events: names)))
        }
    }

    // Guarded by `lock`.
    private let lock = NSLock()
    private var announced: Announcement
    private var clients: [Int: Client] = [:]
    private var wakePending = false
    private var stopReason: String?
    private var closed = false
    private var started = false
    private var publishEncoder = LineEncoder()
    private let coefficientsWriter = CoefficientsLineWriter()
    /// The encoded `analyzers` line (`announce(analyzers:)`), or the `AnalyzersOmittedLine` of a table too
    /// large to describe; nil until announced.
    private var analyzersLine: [UInt8]?
    /// Whether the table in use is described, so that its `rows` lines may be sent (an undescribed table's
    /// per-frame line would not fit in 8 KiB either: it was built, refused and logged as an error every frame).
    private var describesRows = false

    private let finished = DispatchSemaphore(value: 0)
    private var serverThread: Thread?

    // Server-thread only.
    private var nextClientID = 1
    private let encoder = LineEncoder()
    private var acceptPausedUntil = 0.0
    /// Refusals (`too_many_clients`) not yet logged, and when the last refusal line was logged: at most one
    /// line per `refusalLogInterval` (300 connections in a burst wrote 236 warning lines). Server thread only.
    private var refusalsUnlogged = 0
    private var lastRefusalLog = -Double.infinity
    static let refusalLogInterval = 10.0
    /// Bytes of queued lines taken into a client's write buffer at a time: what a slow client reads before
    /// it learns (`dropped`) that lines were lost since.
    static let batchBytes = 16384
    /// Bytes per send(2) at most. The kernel frees a unix socket's write memory one sent chunk at a time,
    /// once the peer has read all of it, and a send succeeds only while that memory is under the socket's
    /// buffer size: with 4 KiB chunks a client that reads slowly but steadily (more than 4 KiB per
    /// `Options.writeTimeout`) frees room for the next send in time, where 64 KiB sends (chunks of up to
    /// about 36 KiB in the kernel) made one reading 2 KB a second look stuck, and it was disconnected.
    static let sendBytes = 4096
    private var reportedCount = 0

    /// Binds a new socket at `path` and listens (not yet accepting: call `start()`).
    ///
    /// Creates missing parent directories with `options.mode`'s search bits (0700 for a 0600 socket, 0750 for
    /// 0660), and refuses a directory another user could replace the socket in (`.unsafeDirectory`: a
    /// symbolic link, a path owned by someone but this user or root, or writable by everyone without the
    /// sticky bit). If `path` exists: a socket a live server answers
    /// on is refused (`.inUse`); a socket nobody listens on (ECONNREFUSED: left by a crashed daemon) is
    /// unlinked and replaced; anything else is refused (`.notASocket`). The file gets `options.mode` at
    /// bind time via the umask (process-wide: bind before other threads create files).
    /// - Parameters:
    ///   - eventNames: the analyzer table's event names, for `hello` and to check `subscribe`.
    ///   - syscalls: where the socket calls go; a fake in tests.
    /// - Throws: `EventServerError` `.pathTooLong` (more than 107 bytes), `.inUse`, `.notASocket`,
    ///   `.unsafeDirectory`, `.tooManyEvents` (a `hello` over 8 KiB), or `.system(errno:)` when a directory
    ///   cannot be created or entered or bind(2) fails (a permission error names the directory).
    public convenience init(path: String, eventNames: [String], options: Options = Options(),
                            log: LogHandler? = nil, syscalls: any SocketSyscalls = LinuxSocketSyscalls()) throws {
        let (fd, identity) = try Self.bindListening(path: path, options: options, syscalls: syscalls)
        do {
            try self.init(fd: fd, path: path, identity: identity, eventNames: eventNames, options: options, log: log,
                          syscalls: syscalls)
        } catch {
            syscalls.close(fd)
            try? syscalls.unlink(path)
            throw error
        }
    }

    /// Serves an already-listening socket, e.g. one inherited from systemd (`SocketActivation`). The
    /// server takes ownership of `fd` once this returns (closes it on `stop`; on a throw the fd is left
    /// open) but never unlinks a path it did not bind. `syscalls`: where the socket calls go; a fake in tests.
    /// - Throws: `EventServerError` `.notASocket` when `fd` is not a listening Unix stream socket,
    ///   `.system(errno:)` when it cannot be made non-blocking.
    public convenience init(listeningFD fd: Int32, eventNames: [String], options: Options = Options(),
                            log: LogHandler? = nil, syscalls: any SocketSyscalls = LinuxSocketSyscalls()) throws {
        let name = "fd \(fd)"
        do {
            guard try syscalls.isListeningUnixStream(fd) else {
                throw EventServerError(.notASocket, subject: name, reason: "not a listening Unix stream socket")
            }
            try syscalls.setNonblockingCloexec(fd, true)
        } catch let error as Errno {
            throw EventServerError(.system(errno: error.code), subject: name, reason: "\(error)")
        }
        let path = (try? syscalls.socketPath(fd)) ?? nil
        try self.init(fd: fd, path: path, identity: nil, eventNames: eventNames, options: options, log: log,
                      syscalls: syscalls)
    }

    private init(fd: Int32, path: String?, identity: (dev: UInt64, ino: UInt64)?, eventNames: [String],
                 options: Options, log: LogHandler?, syscalls: any SocketSyscalls) throws {
        self.syscalls = syscalls
        listenFD = fd
        self.path = path
        boundIdentity = identity
        announced = try Announcement(eventNames)
        self.options = options
        self.log = log
        // The pipe last: a throw before every property is set runs no deinit (which would close `fd`).
        do {
            (wakeRead, wakeWrite) = try syscalls.pipe()
        } catch {
            throw EventServerError(.system(errno: error.code), subject: path ?? "fd \(fd)", reason: "pipe: \(error)")
        }
    }

    deinit {
        lock.lock()
        let needsClose = !closed
        lock.unlock()
        if needsClose { closeEverything() }
    }

    /// The number of connected clients. Thread-safe.
    public var clientCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return clients.count
    }

    /// The number of listening clients: connected for `Options.listenDelay` seconds, or subscribed sooner.
    /// A client that only asks for `status` and leaves never counts. Thread-safe.
    public var listenerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return clients.values.filter(\.listening).count
    }

    /// Starts the server thread. Calling it twice has no effect.
    public func start() {
        lock.lock()
        defer { lock.unlock() }
        guard !started, !closed else { return }
        started = true
        let thread = Thread { [self] in run() }
        thread.name = "winkd-events"
        serverThread = thread
        thread.start()
    }

    // MARK: Publishing (any thread, never blocks on a client)

    /// Queues an event line for every client subscribed to `event.event`.
    public func publish(event: ExpressionEvent) {
        guard let bytes = encodeForPublish(event) else { return }
        enqueue(bytes) { $0.wants(event: event.event) }
    }

    /// Queues a coefficients line for every client that asked for `coefficients: true`. The line is built
    /// (`make`, on the calling thread, outside the server's lock; nil: nothing to send) only while such a
    /// client is connected, so a frame costs nothing for it while nobody asked.
    public func publish(coefficients make: @autoclosure () -> CoefficientsLine?) {
        guard lock.withLock({ clients.values.contains { $0.subscription.coefficients } }),
            let coefficients = make()
        else { return }
        // Every frame: written directly (the same bytes as JSONEncoder's, see CoefficientsLineWriter);
        // JSONEncoder only for what the writer leaves to it, and to report a line too long.
        lock.lock()
        let direct = coefficientsWriter.line(coefficients)
        lock.unlock()
        guard let bytes = direct.flatMap({ $0.count <= LineSplitter.protocolLimit + 1 ? $0 : nil })
            ?? encodeForPublish(coefficients) else { return }
        enqueue(bytes) { $0.coefficients }
    }

    /// Queues a `rows` line for every client that asked for `analyzers: true`. `make` is called only when
    /// such a client is connected (on the calling thread, outside the server's lock), so a frame costs
    /// nothing more while nobody watches the rows.
    public func publish(rows make: () -> RowsLine) {
        let wanted = lock.withLock { describesRows && clients.values.contains { $0.subscription.analyzers } }
        guard wanted, let bytes = encodeForPublish(make()) else { return }
        enqueue(bytes) { $0.analyzers }
    }

    /// Queues a status line for every client (kept in a full queue: `BoundedLineQueue`).
    public func publish(status: StatusLine) {
        guard let bytes = encodeForPublish(status) else { return }
        enqueue(bytes, keep: true) { _ in true }
    }

    private func encodeForPublish<T: Encodable>(_ value: T) -> [UInt8]? {
        lock.lock()
        let data = try? publishEncoder.line(value)
        lock.unlock()
        guard let data else {
            log?(.error, "cannot encode a \(T.self) line (non-finite number?); dropped")
            return nil
        }
        guard data.count <= LineSplitter.protocolLimit + 1 else {
            log?(.error, "a \(T.self) line is \(data.count) bytes, over the 8 KiB limit; dropped")
            return nil
        }
        return Array(data)
    }

    private func enqueue(_ bytes: [UInt8], keep: Bool = false, to filter: (Subscription) -> Bool) {
        let now = monotonicSeconds()
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        for client in clients.values where !client.byeQueued && filter(client.subscription) {
            client.push(bytes, now: now, keep: keep)
        }
        wakeLocked()
    }

    /// Wakes the server thread. Caller holds `lock` (so the pipe is not closed under us).
    private func wakeLocked() {
        guard !wakePending, !closed else { return }
        wakePending = true
        var byte: UInt8 = 1
        _ = withUnsafeBytes(of: &byte) { try? syscalls.write(wakeWrite, $0) }
    }

    // MARK: Stopping

    /// Sends `{"type":"bye","reason":reason}` to every client (after what is already queued), gives them
    /// up to `options.byeGracePeriod` seconds to take it, closes every fd, and unlinks the socket path if
    /// it still is the file this server bound. Waits for the server thread to end, unless called from
    /// it. Idempotent and thread-safe; a second call returns at once without waiting.
    public func stop(reason: String = "shutdown") {
        lock.lock()
        if closed || stopReason != nil {
            lock.unlock()
            return
        }
        stopReason = reason
        let running = started
        wakeLocked()
        lock.unlock()
        if running {
            if Thread.current !== serverThread { finished.wait() }
        } else {
            closeEverything()
        }
    }

    // MARK: The server thread

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        var pollfds: [pollfd] = []
        var order: [Client] = []
        while true {
            drainWakePipe()
            lock.lock()
            wakePending = false
            let reason = stopReason
            order = clients.values.sorted { $0.id < $1.id }
            for client in order {
                client.hasQueued = !client.queue.isEmpty || client.queue.droppedCount > 0
            }
            lock.unlock()
            if let reason {
                shutDown(reason: reason, clients: order)
                finished.signal()
                return
            }

            let now = monotonicSeconds()
            pollfds.removeAll(keepingCapacity: true)
            pollfds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            let listening = now >= acceptPausedUntil
            pollfds.append(pollfd(fd: listening ? listenFD : -1, events: Int16(POLLIN), revents: 0))
            for client in order {
                var events: Int32 = 0
                if !client.readClosed { events |= Int32(POLLIN) }
                if client.hasOutput { events |= Int32(POLLOUT) }
                pollfds.append(pollfd(fd: client.fd, events: Int16(events), revents: 0))
            }
            let timeout = pollTimeout(now: now, clients: order, acceptPaused: !listening)
            do {
                _ = try syscalls.poll(&pollfds, timeoutMilliseconds: timeout)
            } catch {
                log?(.error, "poll failed: \(error)")
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }

            for (index, client) in order.enumerated() {
                let revents = Int32(pollfds[index + 2].revents)
                var alive = true
                if revents & Int32(POLLIN) != 0 { alive = readInput(client, buffer: &buffer) }
                if alive, revents & Int32(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    alive = false
                    client.closeReason = "disconnected"
                }
                if alive, client.hasOutput || client.closeAfterFlush || revents & Int32(POLLOUT) != 0 {
                    alive = flush(client)
                }
                if alive { alive = housekeeping(client, now: monotonicSeconds()) }
                if !alive { closeClient(client) }
            }
            if pollfds[1].revents != 0 { acceptClients() }
            reportCount()
        }
    }

    private func pollTimeout(now: Double, clients: [Client], acceptPaused: Bool) -> Int32 {
        var deadline = now + 1
        if acceptPaused { deadline = min(deadline, acceptPausedUntil) }
        lock.lock()
        for client in clients {
            if client.hasOutput { deadline = min(deadline, client.progressMark + options.writeTimeout) }
            deadline = min(deadline, client.lastSent + options.heartbeatInterval)
            if !client.listening { deadline = min(deadline, client.connectedAt + options.listenDelay) }
        }
        lock.unlock()
        return Int32(max(0, min(1000, ((deadline - now) * 1000).rounded(.up))))
    }

    private func drainWakePipe() {
        var scratch = [UInt8](repeating: 0, count: 64)
        while let n = try? scratch.withUnsafeMutableBytes({ try syscalls.read(wakeRead, into: $0) }), n > 0 {}
    }

    private func acceptClients() {
        for _ in 0..<64 {
            let fd: Int32
            do {
                guard let accepted = try syscalls.accept(listenFD) else { return }
                fd = accepted
            } catch {
                if error.code == EMFILE || error.code == ENFILE || error.code == ENOBUFS || error.code == ENOMEM {
                    log?(.warning, "accept: \(error); pausing for 0.1 s")
                    acceptPausedUntil = monotonicSeconds() + 0.1
                } else if error.code != ECONNABORTED && error.code != EPROTO {
                    log?(.error, "accept: \(error)")
                }
                return
            }
            let peer = syscalls.peerCredentials(fd)
            // Best effort: a socket that refuses keeps the kernel's default (more lines late, none lost).
            if let size = options.sendBufferSize { try? syscalls.setSendBufferSize(fd, bytes: size) }
            lock.lock()
            let connected = clients.count
            lock.unlock()
            let full = connected >= options.maximumClients
            if full {
                // The refusal, then the daemon's state (as a `status` answer would give it, without an id),
                // in one send: `winkctl status` can answer for a full daemon.
                if let refusal = try? encoder.line(ErrorLine(ProtocolError(.tooManyClients, id: nil,
                        "winkd serves at most \(options.maximumClients) "
                            + (options.maximumClients == 1 ? "client" : "clients")))),
                    let state = try? encoder.line(statusAnswer(id: nil, clients: connected, full: true)) {
                    _ = (Array(refusal) + Array(state)).withUnsafeBytes { try? syscalls.send(fd, $0) }
                }
                syscalls.close(fd)
                refusalsUnlogged += 1
                let now = monotonicSeconds()
                if now - lastRefusalLog >= Self.refusalLogInterval {
                    let others = refusalsUnlogged - 1
                    log?(.warning, "refused a client (\(peer?.description ?? "unknown peer")): too many clients"
                         + (others > 0 ? " (and \(others) more since the last such line)" : ""))
                    refusalsUnlogged = 0
                    lastRefusalLog = now
                }
                continue
            }
            let now = monotonicSeconds()
            let client = Client(id: nextClientID, fd: fd, peer: peer, capacity: options.queueCapacity, now: now)
            nextClientID += 1
            client.push(lock.withLock { announced.hello }, now: now, keep: true)
            lock.lock()
            clients[client.id] = client
            lock.unlock()
            log?(.info, "client \(client.id) connected (\(peer?.description ?? "unknown peer"))")
        }
    }

    /// Reads what the client sent; false when the connection must be closed now.
    private func readInput(_ client: Client, buffer: inout [UInt8]) -> Bool {
        for _ in 0..<16 {
            let count: Int?
            do {
                count = try buffer.withUnsafeMutableBytes { try syscalls.read(client.fd, into: $0) }
            } catch {
                client.closeReason = "read failed: \(error)"
                return false
            }
            guard let count else { return true }
            if count == 0 {
                client.readClosed = true  // half-closed: it may still read
                return true
            }
            for item in client.splitter.append(buffer[0..<count]) {
                switch item {
                case .line(let line):
                    handle(line: line, from: client)
                case .tooLong:
                    reply(ErrorLine(ProtocolError(.lineTooLong, id: nil,
                            "a line may hold at most \(LineSplitter.protocolLimit) bytes")), to: client)
                    log?(.notice, "client \(client.id) sent a line over 8 KiB; disconnecting")
                    client.readClosed = true
                    client.closeAfterFlush = true
                    client.closeReason = "line too long"
                    return true
                }
            }
        }
        return true
    }

    private func handle(line: [UInt8], from client: Client) {
        do {
            switch try ClientMessage.parse(line) {
            case .subscribe(let id, let events, let coefficients, let analyzers):
                lock.withLock { client.listening = true }
                let (current, known) = lock.withLock { (client.subscription, announced.known) }
                var subscription = current
                let ok = try subscription.apply(id: id, events: events, coefficients: coefficients,
                                                analyzers: analyzers, knownEvents: known)
                let okLine = try? encoder.line(ok)
                let now = monotonicSeconds()
                lock.lock()
                client.subscription = subscription  // written only here, on the server thread
                // The reply, then the table, before any line sent under the new subscription.
                if let okLine { client.push(Array(okLine), now: now, keep: true) }
                if subscription.analyzers, let analyzersLine { client.push(analyzersLine, now: now, keep: true) }
                client.hasQueued = true
                lock.unlock()
                log?(.debug, "client \(client.id) subscribed to "
                     + "\(events.map { $0.isEmpty ? "no events" : $0.joined(separator: ",") } ?? "every event")"
                     + (coefficients ? " and coefficients" : "") + (analyzers ? " and the analyzer rows" : ""))
            case .status(let id):
                reply(statusAnswer(id: id, clients: lock.withLock { clients.count }), to: client)
            }
        } catch let error as ProtocolError {
            log?(.notice, "client \(client.id): \(error.code.rawValue): \(error.message)")
            reply(ErrorLine(error), to: client)
        } catch {
            reply(ErrorLine(ProtocolError(.badRequest, id: nil, "\(error)")), to: client)
        }
    }

    /// The answer to a `status` request: the source's report (`reportHandler`; idle without one) and
    /// `clients` connections; `full`: the state sent after a refusal (`StatusLine.full`). Server thread.
    private func statusAnswer(id: Int?, clients: Int, full: Bool = false) -> StatusLine {
        let report = lock.withLock { reportHandler }?() ?? SourceReport(state: .idle)
        var line = StatusLine(answering: id, state: report.state, source: report.source, clients: clients,
                              fps: report.fps, message: report.message)
        if full { line.full = true }
        return line
    }

    private func reply<T: Encodable>(_ value: T, to client: Client) {
        guard let data = try? encoder.line(value) else { return }
        let now = monotonicSeconds()
        lock.lock()
        client.push(Array(data), now: now, keep: true)
        client.hasQueued = true
        lock.unlock()
    }

    /// Writes as much as the socket takes; false when the connection must be closed now.
    private func flush(_ client: Client) -> Bool {
        while true {
            if client.outOffset == client.out.count {
                client.out.removeAll(keepingCapacity: true)
                client.outOffset = 0
                lock.lock()
                let dropped = client.queue.takeDroppedCount()
                var lines: [[UInt8]] = []
                var size = 0
                while size < Self.batchBytes, let line = client.queue.popFirst() {
                    size += line.count
                    lines.append(line)
                }
                client.hasQueued = !client.queue.isEmpty
                if client.byeQueued { client.closeAfterFlush = true }
                if lines.isEmpty && dropped == 0 { client.idle = true }
                lock.unlock()
                if dropped > 0, let notice = try? encoder.line(DroppedLine(count: dropped)) {
                    client.out.append(contentsOf: notice)
                    log?(.notice, "client \(client.id) is reading slowly: dropped \(dropped) lines")
                }
                for line in lines { client.out.append(contentsOf: line) }
                if client.out.isEmpty {
                    if client.closeAfterFlush { return false }
                    return true
                }
            }
            let sent: Int
            do {
                let end = min(client.out.count, client.outOffset + Self.sendBytes)
                sent = try client.out.withUnsafeBytes {
                    try syscalls.send(client.fd, UnsafeRawBufferPointer(rebasing: $0[client.outOffset..<end]))
                }
            } catch {
                client.closeReason = "write failed: \(error)"
                return false
            }
            if sent == 0 { return true }
            client.outOffset += sent
            let now = monotonicSeconds()
            client.lastSent = now
            lock.lock()
            client.progressMark = now
            lock.unlock()
        }
    }

    /// Write-stall timeout and heartbeat; false when the connection must be closed now.
    private func housekeeping(_ client: Client, now: Double) -> Bool {
        lock.lock()
        let stalledSince = client.hasOutput ? client.progressMark : nil
        if !client.listening && now - client.connectedAt >= options.listenDelay { client.listening = true }
        lock.unlock()
        if let stalledSince, now - stalledSince >= options.writeTimeout {
            client.closeReason = "not reading (no write progress for \(options.writeTimeout) s)"
            return false
        }
        if !client.hasOutput, !client.closeAfterFlush, now - client.lastSent >= options.heartbeatInterval,
           let line = try? encoder.line(HeartbeatLine(time: rounded(Date().timeIntervalSince1970, places: 3))) {
            lock.lock()
            client.push(Array(line), now: now)
            client.hasQueued = true
            lock.unlock()
            client.lastSent = now
            return flush(client)
        }
        return true
    }

    private func closeClient(_ client: Client) {
        if client.closeAfterFlush || client.readClosed { discardInput(client) }
        syscalls.close(client.fd)
        lock.lock()
        clients[client.id] = nil
        lock.unlock()
        log?(.info, "client \(client.id) closed (\(client.closeReason ?? (client.byeQueued ? "bye" : "done")))")
    }

    /// Reads and drops what the client still sent, so closing does not reset the connection before the
    /// client has read our last line (unix(7) resets a peer when unread data is discarded).
    private func discardInput(_ client: Client) {
        var scratch = [UInt8](repeating: 0, count: 16384)
        for _ in 0..<64 {
            guard let n = try? scratch.withUnsafeMutableBytes({ try syscalls.read(client.fd, into: $0) }),
                  n > 0 else { return }
        }
    }

    private func reportCount() {
        let count = listenerCount
        if count != reportedCount {
            reportedCount = count
            onClientCountChange?(count)
        }
    }

    private func shutDown(reason: String, clients order: [Client]) {
        if let bye = try? encoder.line(ByeLine(reason: reason)) {
            let now = monotonicSeconds()
            lock.lock()
            for client in order where !client.byeQueued {
                client.push(Array(bye), now: now, keep: true)
                client.byeQueued = true
            }
            for client in order { client.hasQueued = true }
            lock.unlock()
        }
        let deadline = monotonicSeconds() + options.byeGracePeriod
        var pending = order
        while !pending.isEmpty {
            pending = pending.filter { client in flush(client) && client.hasOutput }
            let remaining = deadline - monotonicSeconds()
            if pending.isEmpty || remaining <= 0 { break }
            var fds = pending.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            _ = try? syscalls.poll(&fds, timeoutMilliseconds: Int32(max(1, remaining * 1000)))
        }
        for client in order {
            client.closeReason = "server stopping (\(reason))"
            client.closeAfterFlush = true
            closeClient(client)
        }
        reportCount()
        closeEverything()
    }

    /// Closes the listening fd and the wake pipe and unlinks our socket file. Called once.
    private func closeEverything() {
        lock.lock()
        closed = true
        syscalls.close(wakeRead)
        syscalls.close(wakeWrite)
        lock.unlock()
        syscalls.close(listenFD)
        if let path, let identity = boundIdentity, let st = try? syscalls.lstat(path),
           st.st_mode & S_IFMT == S_IFSOCK, UInt64(st.st_dev) == identity.dev, UInt64(st.st_ino) == identity.ino {
            try? syscalls.unlink(path)
        }
        log?(.info, "event socket \(path ?? "fd \(listenFD)") closed")
    }
}

/// One connected client. Fields marked (lock) are shared with publishers under `EventServer.lock`; the
/// rest belong to the server thread.
private final class Client {
    let id: Int
    let fd: Int32
    let peer: PeerCredentials?
    var subscription = Subscription()  // (lock)
    var queue: BoundedLineQueue  // (lock)
    var idle = true  // (lock) nothing queued and nothing half-written
    var progressMark: Double  // (lock) last write progress, or when data started waiting
    var byeQueued = false  // (lock)

    var splitter = LineSplitter()
    var out: [UInt8] = []
    var outOffset = 0
    var hasQueued = false
    var readClosed = false
    var closeAfterFlush = false
    var closeReason: String?
    var lastSent: Double
    let connectedAt: Double
    var listening = false  // (lock) see `EventServer.listenerCount`

    init(id: Int, fd: Int32, peer: PeerCredentials?, capacity: Int, now: Double) {
        connectedAt = now
        self.id = id
        self.fd = fd
        self.peer = peer
        queue = BoundedLineQueue(capacity: capacity)
        progressMark = now
        lastSent = now
    }

    /// Whether bytes wait to be written (half-written buffer or queued lines).
    var hasOutput: Bool { outOffset < out.count || hasQueued }

    /// Appends a line (caller holds the lock); `keep`: see `BoundedLineQueue`.
    func push(_ line: [UInt8], now: Double, keep: Bool = false) {
        if idle {
            idle = false
            progressMark = now
        }
        queue.push(line, keep: keep)
    }
}

extension EventServer {
    /// Replaces the event names announced in `hello` to clients that connect from now on and accepted in
    /// their `subscribe` requests (the daemon calls it after a SIGHUP reload changed the analyzer table).
    /// Connected clients keep their subscriptions; a name no longer announced simply has no more events.
    /// Thread-safe.
    /// - Throws: `EventServerError` `.tooManyEvents` when the `hello` line would be over 8 KiB.
    public func announce(eventNames: [String]) throws {
        let fresh = try Announcement(eventNames)
        lock.withLock { announced = fresh }
    }

    /// Replaces the analyzer table described to clients that subscribe with `analyzers: true`, and sends
    /// it at once to each such client already connected (the daemon calls it at start and after a SIGHUP
    /// reload, before the new table's first `rows` line). Thread-safe.
    /// - Throws: `EventServerError` `.tooManyEvents` when the line would be over 8 KiB (about 35 rows like
    ///   the default ones, fewer with long names or formulas). Such clients are then sent an
    ///   `AnalyzersOmittedLine` instead, and no `rows` lines until a table that fits is announced.
    public func announce<Row>(analyzers: AnalyzersLine<Row>) throws {
        let data = try LineEncoder().line(analyzers)
        guard data.count <= LineSplitter.protocolLimit + 1 else {
            let reason = "its analyzers line would be \(data.count) bytes, over the 8 KiB line limit"
            let omitted = Array(try LineEncoder().line(AnalyzersOmittedLine(rowCount: analyzers.rows.count,
                                                                            omitted: reason)))
            lock.withLock {
                analyzersLine = omitted
                describesRows = false
            }
            enqueue(omitted, keep: true) { $0.analyzers }
            throw EventServerError(.tooManyEvents, subject: "analyzer table", reason: reason)
        }
        let bytes = Array(data)
        lock.withLock {
            analyzersLine = bytes
            describesRows = true
        }
        enqueue(bytes, keep: true) { $0.analyzers }
    }
}
