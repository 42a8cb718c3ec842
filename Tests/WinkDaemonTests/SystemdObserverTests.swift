import EventServer
import Foundation
import Testing
@testable import WinkDaemon

/// The daemon's lifecycle hooks become sd_notify datagrams.
struct SystemdObserverTests {
    @Test func hooksBecomeNotifications() throws {
        let fake = try FakeNotifySocket()
        let observer = try #require(SystemdObserver(environment: ["NOTIFY_SOCKET": fake.environmentValue]))
        observer.daemonIsReady(socketPath: "/run/user/1000/winkd/events.sock")
        #expect(fake.receive() == "READY=1\nSTATUS=idle, listening on /run/user/1000/winkd/events.sock, source closed")
        observer.daemonPublished(status: StatusLine(state: .cameraBusy, source: "/dev/video0",
                                                    message: "held by another program; retrying in 2 s"))
        #expect(fake.receive() == "STATUS=camera busy /dev/video0: held by another program; retrying in 2 s, 0 clients")
        observer.daemonClientsChanged(count: 2)
        #expect(fake.receive() == "STATUS=camera busy /dev/video0: held by another program; retrying in 2 s, 2 clients")
        observer.daemonPublished(status: StatusLine(state: .sourceOpened, source: "/dev/video0"))
        #expect(fake.receive() == "STATUS=streaming /dev/video0, 2 clients")
        observer.daemonIsReloading()
        let reloading = try #require(fake.receive())
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        // The reload's own line is news after the source's state, which stays (a newcomer's finding: STATUS
        // read "reload ok ...: configuration reloaded, 0 clients" for as long as the recording streamed).
        observer.daemonPublished(status: StatusLine(state: .reloadFailed, source: "/c.json", message: "bad row"))
        #expect(fake.receive() == "STATUS=streaming /dev/video0, 2 clients; reload failed /c.json: bad row")
        observer.daemonDidReload(ok: false)
        #expect(fake.receive() == "READY=1\nSTATUS=streaming /dev/video0, 2 clients; reload failed /c.json: bad row")
        observer.daemonClientsChanged(count: 1)
        #expect(fake.receive() == "STATUS=streaming /dev/video0, 1 client; reload failed /c.json: bad row")
        // A change of the source's state drops the news; the picture coming back is streaming again.
        observer.daemonPublished(status: StatusLine(state: .cameraDark, source: "/dev/video0", message: "covered"))
        #expect(fake.receive() == "STATUS=camera dark /dev/video0: covered, 1 client")
        observer.daemonPublished(status: StatusLine(state: .cameraLight, source: "/dev/video0"))
        #expect(fake.receive() == "STATUS=streaming /dev/video0, 1 client")
        observer.daemonIsStopping()
        #expect(fake.receive() == "STOPPING=1\nSTATUS=stopping")
        observer.daemonIsStopping()  // the run loop ending after a SIGTERM: no second STOPPING
        #expect(fake.receive(timeout: 0.2) == nil)
        #expect(SystemdObserver(environment: [:]) == nil)
    }
}
