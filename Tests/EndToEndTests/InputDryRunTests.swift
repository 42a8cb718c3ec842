import Foundation
import Testing
import TestSupport

/// `winkctl input --dry-run` against a real winkd playing the left-wink fixture.
@Suite(.serialized)
struct InputDryRunTests {
    @Test func aLeftWinkPressesLeftArrow() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let map = dir.appendingPathComponent("map.json")
        try Data("""
            {"safeStart": 0.3, "mappings": [
              {"event": "winkLeft", "action": {"key": "KEY_LEFT"}, "mode": "press"},
              {"event": "winkRight", "action": {"key": "KEY_RIGHT"}, "mode": "press"},
              {"event": "mouthOpen", "action": {"button": "BTN_LEFT"}, "mode": "hold"}
            ]}
            """.utf8).write(to: map)
        let daemon = Process()
        daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
        daemon.arguments = ["--source", Binaries.fixture("video/single_face_wink_left.mp4"), "--socket", socket]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        #expect(Wait.forFile(socket), "winkd did not create \(socket)")
        let r = try Binaries.run("winkctl", ["input", "--map", map.path, "--socket", socket, "--dry-run", "--once"])
        daemon.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutLines == ["press KEY_LEFT", "release KEY_LEFT"], "\(r.stdout)")
    }
}
