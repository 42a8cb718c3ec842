import Foundation
import WinkCore

@testable import InputClient

/// The recorded event streams next to this file (made with `winkctl analyze` on the shared fixtures).
func recordedStream(_ name: String, filePath: String = #filePath) throws -> [ExpressionEvent] {
    let url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/\(name).ndjson")
    let text = try String(contentsOf: url, encoding: .utf8)
    return try text.split(separator: "\n").map { try JSONDecoder().decode(ExpressionEvent.self, from: Data($0.utf8)) }
}

/// Lines an injector printed, in order (thread-safe: the session test writes from its own thread).
final class Transcript: @unchecked Sendable {
    private var items: [String] = []
    private let lock = NSLock()
    func append(_ line: String) {
        lock.lock()
        items.append(line)
        lock.unlock()
    }
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

/// An engine over a map given as JSON, printing into a transcript as `--dry-run` would.
struct Harness {
    let transcript = Transcript()
    let engine: MappingEngine

    init(_ json: String) throws {
        let map = try InputMap.parse(Data(json.utf8))
        let transcript = self.transcript
        engine = MappingEngine(map: map, injector: PrintingInjector { transcript.append($0); return nil })
    }

    func feed(_ events: [ExpressionEvent]) { for event in events { engine.handle(event) } }
    var lines: [String] { transcript.lines }
}

func face(_ time: Double) -> ExpressionEvent { ExpressionEvent(event: "faceFound", phase: nil, frame: 0, time: time) }
func lost(_ time: Double) -> ExpressionEvent { ExpressionEvent(event: "faceLost", phase: nil, frame: 0, time: time) }
func began(_ name: String, _ time: Double) -> ExpressionEvent {
    ExpressionEvent(event: name, phase: .began, frame: Int(time * 30), time: time, value: 0.8)
}
func ended(_ name: String, _ time: Double, since start: Double = 0) -> ExpressionEvent {
    ExpressionEvent(event: name, phase: .ended, frame: Int(time * 30), time: time, value: 0.1, duration: time - start)
}
func occurred(_ name: String, _ time: Double, duration: Double = 0.13) -> ExpressionEvent {
    ExpressionEvent(event: name, phase: .occurred, frame: Int(time * 30), time: time, value: 0.9, duration: duration)
}

func tap(_ key: String) -> [String] { ["press \(key)", "release \(key)"] }

/// A uinput layer that records instead of touching /dev/uinput.
final class FakeUinputFactory: UinputDeviceFactory {
    var specs: [VirtualDeviceSpec] = []
    var devices: [FakeUinputDevice] = []
    var failure: InputError?

    func makeDevice(_ spec: VirtualDeviceSpec) throws -> UinputDevice {
        if let failure { throw failure }
        specs.append(spec)
        let device = FakeUinputDevice()
        devices.append(device)
        return device
    }
}

final class FakeUinputDevice: UinputDevice {
    struct Write: Equatable { var type: UInt16, code: UInt16, value: Int32 }
    var writes: [Write] = []
    var destroyed = 0
    func write(type: UInt16, code: UInt16, value: Int32) throws {
        writes.append(Write(type: type, code: code, value: value))
    }
    func destroy() { destroyed += 1 }
}
