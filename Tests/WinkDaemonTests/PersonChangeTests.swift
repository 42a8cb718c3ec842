import Capture
import Expressions
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

extension ModelTests {
    /// Another person after the face has left is learned afresh (`Calibration.Settings.forgetAfterAbsence`).
    /// Found by `Scripts/heldout/make_people_session.py`: the people clips played back to back 4 s apart gave
    /// 9 false smiles (1 with each clip alone, and now), as each person was read against the mouth of the
    /// people before them for most of the 60 s window.
    @Suite
    struct PersonChangeTests {
        static let child = (0..<225).map { SplicedSource.Piece.clip("../people/video/liveportrait_d11.mp4", $0) }
        static let woman = (0..<536).map { SplicedSource.Piece.clip("../people/video/liveportrait_d14.mp4", $0) }
        /// 3.1 s at 30 fps of an empty room (a real scene without a face, not a blank frame).
        static let away = (0..<93).map { SplicedSource.Piece.clip("no_face.mp4", $0) }

        func events(_ pieces: [SplicedSource.Piece], forgetAfterAbsence: Double? = nil) throws -> [String] {
            var c = Configuration()
            if let forgetAfterAbsence { c.calibration.forgetAfterAbsence = forgetAfterAbsence }
            let p = FramePipeline(configuration: c, predictor: sharedPredictor)
            return try p.events(of: try SplicedSource(pieces)).filter { $0.isOccurrence }
                .map { "\($0.event)@\($0.frame)" }
        }

        /// The events of `pieces` from frame `offset` on, with their frames counted from there.
        func from(_ offset: Int, _ events: [String]) -> [String] {
            events.compactMap { e in
                let parts = e.split(separator: "@")
                guard let f = Int(parts[1]), f >= offset else { return nil }
                return "\(parts[0])@\(f - offset)"
            }
        }

        @Test func aPersonWhoSitsDownAfterAnotherIsReadAsIfAlone() throws {
            let alone = try events(Self.woman)
            let after = try events(Self.child + Self.away + Self.woman)
            let offset = Self.child.count + Self.away.count
            #expect(after.contains("faceLost@\(Self.child.count)"), "\(after)")
            #expect(from(offset, after) == alone, "alone: \(alone)")
            // Read against the child's neutral instead, her events are not her own (smiles at 5 and 129: one
            // labelled, one false).
            let remembered = try events(Self.child + Self.away + Self.woman, forgetAfterAbsence: 86_400)
            #expect(from(offset, remembered) != alone, "the input must show what remembering costs")
        }

        @Test func aShortAbsenceKeepsWhatWasLearned() throws {
            // Two seconds away (a head turned past the detector, bending down): the same person, still learned.
            let brief = Array(Self.away[0..<60])
            let p = FramePipeline(configuration: Configuration(), predictor: sharedPredictor)
            var samplesBefore = 0
            var samplesAtReturn: Int?
            let pieces = Array(Self.woman[0..<90]) + brief + Array(Self.woman[90..<120])
            try p.run(try SplicedSource(pieces)) { info, _ in
                if info.index == 89 { samplesBefore = p.engine.calibration.samples }
                if info.index == 90 + brief.count { samplesAtReturn = p.engine.calibration.samples }
            }
            #expect(samplesBefore >= 20)
            #expect(samplesAtReturn == samplesBefore + 1, "the face was lost and found, its neutral kept")
        }
    }
}
