import Foundation
import TestSupport
import Testing
import WinkCore

/// The server writes coefficient lines with `CoefficientsLineWriter` instead of `JSONEncoder`; the bytes
/// must be exactly `LineEncoder`'s, whatever the numbers (rounded or not, integral, negative zero, tiny,
/// huge), the frame and timestamp (none, zero, the largest), and the key set (which may change).
struct CoefficientsLineWriterTests {

    static let keys = BlendShape.allCases.map(\.rawValue)

    func number(_ random: inout SplitMix64) -> Double {
        switch random.next() % 9 {
        case 0: return 0
        case 1: return -0.0
        case 2: return Double(Int(random.next() % 200) - 100)
        case 3: return rounded(random.unitDouble(), places: 3)
        case 4: return rounded(random.unitDouble() * 360 - 180, places: 1)
        case 5: return random.unitDouble() * 1e-6
        case 6: return (random.unitDouble() - 0.5) * 1e17
        case 7: return random.unitDouble()
        default: return rounded(random.unitDouble() * 2 - 1, places: 3)
        }
    }

    @Test func bytesEqualJSONEncoders() throws {
        let writer = CoefficientsLineWriter()
        let encoder = LineEncoder()
        var random = SplitMix64(seed: 99)
        for trial in 0..<2000 {
            var keys = Self.keys
            if trial % 50 == 49 { keys.removeLast(Int(random.next() % 5) + 1) }  // the key set changes
            var values: [String: Double] = [:]
            for key in keys { values[key] = number(&random) }
            let frame = [0, 1, Int(random.next() % 1_000_000), Int.max, -5][trial % 5]
            let mono: UInt64? = [nil, 0, random.next(), UInt64.max][trial % 4]
            let pose: HeadPose? =
                trial % 3 == 0
                ? nil
                : HeadPose(yaw: Float(number(&random)), pitch: Float(number(&random)), roll: Float(number(&random)))
            let line = CoefficientsLine(
                frame: frame, time: number(&random), values: values, headPose: pose, tMonoNs: mono)
            let ours = try #require(writer.line(line), "trial \(trial)")
            let expected = Array(try encoder.line(line))
            #expect(
                ours == expected,
                "trial \(trial):\n\(String(decoding: ours, as: UTF8.self))\(String(decoding: expected, as: UTF8.self))")
        }
    }

    @Test func leavesWhatItCannotWriteToJSONEncoder() {
        let writer = CoefficientsLineWriter()
        #expect(writer.line(CoefficientsLine(frame: 1, time: .nan, values: ["jawOpen": 0])) == nil)
        #expect(writer.line(CoefficientsLine(frame: 1, time: 0, values: ["jawOpen": .infinity])) == nil)
        #expect(writer.line(CoefficientsLine(frame: 1, time: 0, values: ["a\"b": 1])) == nil)
        #expect(writer.line(CoefficientsLine(frame: 1, time: 0, values: ["jawOpen": 0.5])) != nil)
    }
}
