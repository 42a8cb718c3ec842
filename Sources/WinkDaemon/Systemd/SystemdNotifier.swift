import EventServer
import Foundation
import Synchronization

/// The service side of systemd's notification protocol (sd_notify(3), "Notes" and systemd.service(5)
/// `Type=notify`): each notification is one datagram of newline-separated `VARIABLE=value` assignments sent
/// to the `AF_UNIX` socket named in `$NOTIFY_SOCKET`. A path starting with `/` is a file-system socket; one
/// starting with `@` is in the abstract namespace (the `@` stands for a leading NUL byte). The protocol is
/// documented as stable for independent implementations, so winkd speaks it without libsystemd.
///
/// Notifications are best effort: each call opens a datagram socket, sends with `MSG_DONTWAIT` (a full
/// or absent receiver never blocks the caller) and closes it, as libsystemd does; a failed send returns
/// false and changes nothing. The type is thread-safe: its address is immutable and the small state used
/// to skip repeated status lines and to pace watchdog pings is behind a mutex.
///
/// Typical use, with `notifier` nil (every call a no-op) when the process was not started by systemd:
/// ```swift
/// let notifier = SystemdNotifier()
/// notifier?.ready(status: "waiting for clients")
/// notifier?.status("streaming /dev/video0 640x480@30, 2 clients")
/// notifier?.watchdogIfDue()      // from the frame loop
/// notifier?.stopping()
/// ```
public final class SystemdNotifier: Sendable {
    /// Where notifications go, decoded from `$NOTIFY_SOCKET`.
    public enum Address: Equatable, Sendable {
        /// A socket file, e.g. `/run/systemd/notify`.
        case path(String)
        /// An abstract-namespace socket name, without the `@` (sent as a leading NUL byte, unterminated).
        case abstract(String)
    }

    /// The receiver of the notifications.
    public let address: Address

    /// The service's watchdog timeout (`WatchdogSec=`, passed as `$WATCHDOG_USEC`), or nil when the
    /// watchdog is off or meant for another process (`$WATCHDOG_PID` names a different pid). See
    /// sd_watchdog_enabled(3).
    public let watchdogTimeout: Duration?

    /// How often to send `WATCHDOG=1`: half the timeout, as sd_watchdog_enabled(3) recommends; nil when the
    /// watchdog is off.
    public var watchdogInterval: Duration? { watchdogTimeout.map { $0 / 2 } }

    private struct State {
        var lastStatus: String?
        var lastPing: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    /// Where the datagram socket calls go.
    private let syscalls: any SocketSyscalls

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID`.
    ///
    /// Returns nil (so that `notifier?.ready()` does nothing) when `NOTIFY_SOCKET` is unset or empty, or
    /// holds an address this implementation cannot use: neither `/`- nor `@`-prefixed (e.g. systemd 254's
    /// `vsock:` form, which only virtual machines receive), or longer than `sun_path` holds (107 bytes for a
    /// path, 107 for an abstract name).
    /// - Parameters:
    ///   - environment: the process environment; tests pass their own.
    ///   - processID: this process's id, compared with `$WATCHDOG_PID`.
    ///   - syscalls: where the socket calls go; a fake in tests.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment,
                 processID: Int32 = getpid(), syscalls: any SocketSyscalls = LinuxSocketSyscalls()) {
        guard let raw = environment["NOTIFY_SOCKET"], let address = Self.address(raw) else { return nil }
        self.address = address
        self.syscalls = syscalls
        watchdogTimeout = Self.watchdogTimeout(environment: environment, processID: processID)
    }

    /// Decodes a `$NOTIFY_SOCKET` value; nil when it is empty, of an unsupported kind or too long.
    static func address(_ raw: String) -> Address? {
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)  // 108 on Linux
        if raw.hasPrefix("/") {
            return raw.utf8.count < capacity && !raw.utf8.contains(0) ? .path(raw) : nil
        }
        if raw.hasPrefix("@") {
            let name = String(raw.dropFirst())
            return !name.isEmpty && name.utf8.count < capacity ? .abstract(name) : nil
        }
        return nil
    }

    /// The watchdog timeout from `$WATCHDOG_USEC` (microseconds, a positive decimal integer), honouring
    /// `$WATCHDOG_PID` when set, as sd_watchdog_enabled(3) does. Nil when unset, malformed, zero, or meant
    /// for another pid.
    public static func watchdogTimeout(environment: [String: String], processID: Int32) -> Duration? {
        guard let usecText = environment["WATCHDOG_USEC"], let usec = UInt64(usecText), usec > 0,
              usec < UInt64(Int64.max) else { return nil }
        if let pidText = environment["WATCHDOG_PID"], !pidText.isEmpty {
            guard let pid = Int32(pidText), pid == processID else { return nil }
        }
        return .microseconds(Int64(usec))
    }

    // MARK: Notifications

    /// `READY=1`: startup is complete (for winkd: the socket accepts connections). systemd then considers
    /// the unit started and starts units ordered after it. With `status`, a `STATUS=` line rides along.
    @discardableResult
    public func ready(status text: String? = nil) -> Bool {
        guard let text else { return send("READY=1") }
        state.withLock { $0.lastStatus = Self.oneLine(text) }
        return send("READY=1\nSTATUS=\(Self.oneLine(text))")
    }

    /// `STATUS=text`: a line a person reads in `systemctl status`, e.g. "streaming /dev/video0 640x480@30,
    /// 2 clients". Newlines in `text` become spaces (a newline would end the assignment). A text equal to the
    /// last one sent is not sent again, so callers may report on every change of any part of it.
    /// - Returns: true when the datagram was sent or the status was already showing.
    @discardableResult
    public func status(_ text: String) -> Bool {
        let line = Self.oneLine(text)
        let changed = state.withLock { state -> Bool in
            guard state.lastStatus != line else { return false }
            state.lastStatus = line
            return true
        }
        guard changed else { return true }
        let sent = send("STATUS=\(line)")
        if !sent { state.withLock { if $0.lastStatus == line { $0.lastStatus = nil } } }
        return sent
    }

    /// `WATCHDOG=1`: the service is alive. Sent unconditionally; see `watchdogIfDue(now:)` for a paced ping.
    @discardableResult
    public func watchdog() -> Bool {
        let sent = send("WATCHDOG=1")
        if sent { state.withLock { $0.lastPing = ContinuousClock.now } }
        return sent
    }

    /// Sends `WATCHDOG=1` if the watchdog is on and at least `watchdogInterval` has passed since the last
    /// ping (or none was sent yet). Cheap enough to call on every frame.
    /// - Parameter now: the current instant; tests pass their own.
    /// - Returns: true when a ping was sent.
    @discardableResult
    public func watchdogIfDue(now: ContinuousClock.Instant = .now) -> Bool {
        guard let interval = watchdogInterval else { return false }
        let due = state.withLock { state -> Bool in
            if let last = state.lastPing, now - last < interval { return false }
            state.lastPing = now
            return true
        }
        guard due else { return false }
        return send("WATCHDOG=1")
    }

    /// `STOPPING=1`: the service is shutting down (systemd shows "deactivating"). With `status`, a
    /// `STATUS=` line rides along.
    @discardableResult
    public func stopping(status text: String? = nil) -> Bool {
        guard let text else { return send("STOPPING=1") }
        return send("STOPPING=1\nSTATUS=\(Self.oneLine(text))")
    }

    /// Sends `state` (newline-separated `VARIABLE=value` assignments) as one datagram.
    /// - Returns: false when the socket could not be created or the datagram not sent (no receiver, the
    ///   receiver's queue is full, `EPERM` from `NotifyAccess=`).
    @discardableResult
    public func send(_ state: String) -> Bool {
        let address: [UInt8] = switch self.address {
        case .path(let path): Array(path.utf8) + [0]  // with the terminating NUL, as sd_notify sends it
        case .abstract(let name): [0] + Array(name.utf8)  // not NUL-terminated; the name's length counts
        }
        let payload = Array(state.utf8)
        return (try? syscalls.sendDatagram(payload, toAddress: address)) == payload.count
    }

    /// `text` with every line break replaced by a space.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
