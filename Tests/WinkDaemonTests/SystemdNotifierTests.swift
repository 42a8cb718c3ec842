import Foundation
import TestSupport
import Testing

@testable import WinkDaemon

/// A stand-in for systemd's notify socket: a datagram socket bound to a file in a temporary directory or to
/// an abstract name, read with a timeout.
final class FakeNotifySocket {
    let fd: Int32
    /// The value for `$NOTIFY_SOCKET`.
    let environmentValue: String
    private let directory: String?

    init(abstract: Bool = false) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        let length: Int
        if abstract {
            let name = "winkd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            environmentValue = "@" + name
            directory = nil
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw[0] = 0
                UnsafeMutableRawBufferPointer(rebasing: raw[1...]).copyBytes(from: Array(name.utf8))
            }
            length = offset + 1 + name.utf8.count
        } else {
            let dir = FileManager.default.temporaryDirectory.path + "/winkd-notify-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            directory = dir
            environmentValue = dir + "/notify"
            withUnsafeMutableBytes(of: &address.sun_path) {
                $0.copyBytes(from: Array(dir.utf8) + Array("/notify".utf8))
            }
            length = MemoryLayout<sockaddr_un>.size
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        // `deinit` closes the socket (it runs when an init throws with every property set): no close here.
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(fd)
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The next datagram as text, or nil if none arrives within `timeout` seconds (by default
    /// `Wait.generous`, for one that is expected; a check that none comes gives a short timeout).
    func receive(timeout: Double = Wait.generous) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

struct SystemdNotifierTests {
    @Test func eachNotificationArrivesAsOneDatagram() throws {
        let fake = try FakeNotifySocket()
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": fake.environmentValue]))
        #expect(notifier.address == .path(fake.environmentValue))
        #expect(notifier.ready())
        #expect(fake.receive() == "READY=1")
        #expect(notifier.status("streaming /dev/video0 640x480@30, 2 clients"))
        #expect(fake.receive() == "STATUS=streaming /dev/video0 640x480@30, 2 clients")
        #expect(notifier.watchdog())
        #expect(fake.receive() == "WATCHDOG=1")
        #expect(notifier.stopping())
        #expect(fake.receive() == "STOPPING=1")
        #expect(notifier.ready(status: "idle"))
        #expect(fake.receive() == "READY=1\nSTATUS=idle")
        #expect(notifier.stopping(status: "shutting\ndown"))
        #expect(fake.receive() == "STOPPING=1\nSTATUS=shutting down")
    }

    @Test func anAbstractSocketReceivesToo() throws {
        let fake = try FakeNotifySocket(abstract: true)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": fake.environmentValue]))
        #expect(notifier.address == .abstract(String(fake.environmentValue.dropFirst())))
        #expect(notifier.ready())
        #expect(fake.receive() == "READY=1")
    }

    @Test func withoutNotifySocketThereIsNoNotifier() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/notify"]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "vsock:2:1234"]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@"]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 107)]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 106)]) != nil)
    }

    @Test func aMissingReceiverFailsWithoutBlocking() throws {
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/winkd/notify"]))
        let start = ContinuousClock.now
        #expect(!notifier.ready())
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func aFullReceiverQueueDoesNotBlock() throws {
        let fake = try FakeNotifySocket()
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": fake.environmentValue]))
        let start = ContinuousClock.now
        var failures = 0
        // Nobody reads: the receiver's queue (net.unix.max_dgram_qlen, 512 by default) fills up.
        for _ in 0..<2000 where !notifier.watchdog() { failures += 1 }
        #expect(failures > 0)
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func aRepeatedStatusIsSentOnce() throws {
        let fake = try FakeNotifySocket()
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": fake.environmentValue]))
        notifier.status("idle, source closed, 0 clients")
        notifier.status("idle, source closed, 0 clients")
        notifier.status("opening /dev/video0, 1 client")
        #expect(fake.receive() == "STATUS=idle, source closed, 0 clients")
        #expect(fake.receive() == "STATUS=opening /dev/video0, 1 client")
        #expect(fake.receive(timeout: 0.2) == nil)
    }

    @Test func watchdogIntervalIsHalfTheTimeout() throws {
        let base = ["NOTIFY_SOCKET": "/run/systemd/notify"]
        let on = try #require(
            SystemdNotifier(
                environment: base.merging(["WATCHDOG_USEC": "15000000"]) { $1 },
                processID: 42))
        #expect(on.watchdogTimeout == .seconds(15))
        #expect(on.watchdogInterval == .milliseconds(7500))
        let mine = try #require(
            SystemdNotifier(
                environment: base.merging(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "42"]) { $1 }, processID: 42))
        #expect(mine.watchdogInterval == .seconds(1))
        let theirs = try #require(
            SystemdNotifier(
                environment: base.merging(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "43"]) { $1 }, processID: 42))
        #expect(theirs.watchdogInterval == nil)
        for bad in ["0", "-5", "ten", ""] {
            #expect(SystemdNotifier.watchdogTimeout(environment: ["WATCHDOG_USEC": bad], processID: 42) == nil)
        }
        #expect(SystemdNotifier(environment: base, processID: 42)?.watchdogInterval == nil)
    }

    @Test func watchdogIfDueIsPacedByTheInterval() throws {
        let fake = try FakeNotifySocket()
        let notifier = try #require(
            SystemdNotifier(
                environment: ["NOTIFY_SOCKET": fake.environmentValue, "WATCHDOG_USEC": "2000000"]))
        let t0 = ContinuousClock.now
        #expect(notifier.watchdogIfDue(now: t0))
        #expect(!notifier.watchdogIfDue(now: t0 + .milliseconds(999)))
        #expect(notifier.watchdogIfDue(now: t0 + .milliseconds(1000)))
        #expect(fake.receive() == "WATCHDOG=1")
        #expect(fake.receive() == "WATCHDOG=1")
        #expect(fake.receive(timeout: 0.2) == nil)
        let off = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": fake.environmentValue]))
        #expect(!off.watchdogIfDue())
        #expect(fake.receive(timeout: 0.2) == nil)
    }

    @Test func idleWatchdogPingsOnlyWhileIdle() throws {
        let fake = try FakeNotifySocket()
        // 100 ms timeout: a ping every 50 ms.
        let notifier = try #require(
            SystemdNotifier(
                environment: ["NOTIFY_SOCKET": fake.environmentValue, "WATCHDOG_USEC": "100000"]))
        let watchdog = try #require(IdleWatchdog(notifier: notifier))
        #expect(fake.receive() == "WATCHDOG=1")
        #expect(fake.receive() == "WATCHDOG=1")
        watchdog.isIdle = false
        Thread.sleep(forTimeInterval: 0.1)
        while fake.receive(timeout: 0) != nil {}  // a ping already in flight when streaming began
        #expect(fake.receive(timeout: 0.3) == nil)
        watchdog.isIdle = true
        #expect(fake.receive() == "WATCHDOG=1")
        watchdog.cancel()
        #expect(IdleWatchdog(notifier: nil) == nil)
        #expect(IdleWatchdog(notifier: SystemdNotifier(environment: ["NOTIFY_SOCKET": fake.environmentValue])) == nil)
    }
}
