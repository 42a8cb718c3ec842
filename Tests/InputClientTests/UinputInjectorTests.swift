import Foundation
@testable import InputClient
import TestSupport
import Testing
import WinkCore

struct UinputInjectorTests {
    static let map = try! InputMap.parse(Data("""
        {"mappings": [{"event": "winkLeft", "action": {"key": "KEY_LEFT"}},
                      {"event": "smile", "action": {"key": "KEY_ENTER"}, "minHold": 0.8},
                      {"event": "mouthOpen", "action": {"button": "BTN_LEFT"}, "mode": "hold"},
                      {"event": "blink", "action": {"command": ["true"]}}]}
        """.utf8))

    @Test func createsAMouseAndKeyboardWithTheMappedKeys() throws {
        let factory = FakeUinputFactory()
        _ = try UinputInjector(map: Self.map, factory: factory, log: { _ in })
        #expect(factory.specs.count == 1)
        let spec = try #require(factory.specs.first)
        #expect(spec.name == "winkd face input")
        #expect(spec.keys.map(\.code) == [28, 105, 0x110, 0x111, 0x112])
        #expect(spec.keys.map(\.name) == ["KEY_ENTER", "KEY_LEFT", "BTN_LEFT", "BTN_RIGHT", "BTN_MIDDLE"])
        #expect(spec.relativeAxes == [0, 1]) // REL_X, REL_Y
    }

    @Test func writesKeyDownUpEachFollowedBySynReport() throws {
        let factory = FakeUinputFactory()
        let injector = try UinputInjector(map: Self.map, factory: factory, log: { _ in })
        let left = try #require(InputKey(named: "KEY_LEFT"))
        injector.press(left)
        injector.release(left)
        typealias W = FakeUinputDevice.Write
        #expect(factory.devices[0].writes == [
            W(type: 1, code: 105, value: 1), W(type: 0, code: 0, value: 0),
            W(type: 1, code: 105, value: 0), W(type: 0, code: 0, value: 0),
        ])
    }

    @Test func engineDrivesTheDeviceAndDisconnectLetsTheButtonUp() throws {
        let factory = FakeUinputFactory()
        let injector = try UinputInjector(map: Self.map, factory: factory, log: { _ in })
        let engine = MappingEngine(map: Self.map, injector: injector)
        for event in [face(0), began("mouthOpen", 2)] { engine.handle(event) }
        engine.releaseAll()
        typealias W = FakeUinputDevice.Write
        #expect(factory.devices[0].writes == [
            W(type: 1, code: 0x110, value: 1), W(type: 0, code: 0, value: 0),
            W(type: 1, code: 0x110, value: 0), W(type: 0, code: 0, value: 0),
        ])
        injector.close()
        #expect(factory.devices[0].destroyed >= 1)
    }

    /// A newcomer's finding: a map of commands alone exited 69 without /dev/uinput, a device it never uses.
    @Test func aMapOfCommandsAloneNeedsNoDevice() throws {
        let factory = FakeUinputFactory()
        factory.failure = LibevdevUinput.error(path: "/dev/uinput", errno: ENOENT, opening: true)
        let map = try InputMap.parse(
            Data(
                (#"{"mappings": [{"event": "faceLost", "action": {"command": ["true"]}},"#
                    + #"{"event": "blink,blink", "action": {"pause": true}}]}"#).utf8))
        let injector = try UinputInjector(map: map, factory: factory, log: { _ in })
        #expect(factory.specs.isEmpty)
        injector.close()
        #expect(throws: InputError.self) { try UinputInjector(map: Self.map, factory: factory, log: { _ in }) }
    }

    @Test func deviceFailureIsExit69() {
        let factory = FakeUinputFactory()
        factory.failure = LibevdevUinput.error(path: "/dev/uinput", errno: EACCES, opening: true)
        do {
            _ = try UinputInjector(map: Self.map, factory: factory, log: { _ in })
            Issue.record("expected an error")
        } catch let error as InputError {
            #expect(error.exitCode == .unavailable)
            #expect(error.description.hasPrefix("/dev/uinput: not writable (add a udev rule"))
            #expect(error.description.contains("group input"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func realBackendReportsAMissingNode() {
        do {
            _ = try LibevdevUinput(path: "/nonexistent/uinput").makeDevice(VirtualDeviceSpec.forMap(Self.map))
            Issue.record("expected an error")
        } catch let error as InputError {
            #expect(error.exitCode == .unavailable)
            #expect(error.description == "/nonexistent/uinput: missing (load the uinput module: modprobe uinput)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func realBackendRefusesAFileThatIsNotUinput() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-uinput-\(getpid())").path
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try LibevdevUinput(path: path).makeDevice(VirtualDeviceSpec.forMap(Self.map))
            Issue.record("expected an error")
        } catch let error as InputError {
            #expect(error.exitCode == .unavailable)
            #expect(error.description.hasPrefix("\(path): cannot create a virtual input device:"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func spawnerStartsProgramsWithoutAShell() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("spawned $(x) \(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let pid = try CommandSpawner().spawn(["touch", marker])
        #expect(Wait.until { FileManager.default.fileExists(atPath: marker) })  // the literal name: no shell
        // A newcomer's finding: a finished command stayed a zombie until the next one started. Reaped now.
        #expect(Wait.until(10) { !FileManager.default.fileExists(atPath: "/proc/\(pid)") }, "pid \(pid) not reaped")
        // ... and a missing program was Foundation's "Error Domain=NSPOSIXErrorDomain Code=2 ...".
        #expect(throws: Errno(code: ENOENT)) { try CommandSpawner().spawn(["/nonexistent/program"]) }
        #expect("\(Errno(code: ENOENT))" == "ENOENT: No such file or directory")
    }

    /// Where a command's program would come from: a path as given, a name from PATH; nil for neither.
    @Test func aCommandsProgramIsResolvedAsPosixSpawnpWould() throws {
        let env = ["PATH": "/nonexistent:/usr/bin:/bin"]
        #expect(CommandSpawner.resolve("sh", environment: env) == "/usr/bin/sh")
        #expect(CommandSpawner.resolve("/bin/sh", environment: env) == "/bin/sh")
        #expect(CommandSpawner.resolve("no-such-program-\(getpid())", environment: env) == nil)
        #expect(CommandSpawner.resolve("/etc/passwd", environment: env) == nil, "not executable")
        #expect(CommandSpawner.resolve("/usr/bin", environment: env) == nil, "a folder")
        #expect(CommandSpawner.resolve("", environment: env) == nil)
    }
}
