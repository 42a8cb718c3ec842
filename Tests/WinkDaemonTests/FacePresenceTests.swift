import Capture
import Expressions
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

/// A recording assembled from frames of fixture clips and flat frames, at 30 fps.
final class SplicedSource: FrameSource {
    enum Piece {
        /// Frame `index` of the fixture video `clip`.
        case clip(String, Int)
        /// A frame of one grey level, the size of the clips' frames.
        case flat(UInt8)
    }
    private var frames: [PixelBuffer] = []
    private var index = 0
    let name = "spliced"
    let isLive = false
    var nominalFrameRate: Double? { 30 }

    init(_ pieces: [Piece]) throws {
        var decoded: [String: [PixelBuffer]] = [:]
        for case .clip(let clip, _) in pieces where decoded[clip] == nil {
            let source = try openMediaFile(path: Fixtures.video(clip))
            var all: [PixelBuffer] = []
            while true {
                let b = PixelBuffer()
                guard try source.read(into: b) != nil else { break }
                all.append(b)
            }
            decoded[clip] = all
        }
        let size = decoded.values.first?.first
        for piece in pieces {
            switch piece {
            case .clip(let clip, let i): frames.append(decoded[clip]![i])
            case .flat(let level):
                let b = PixelBuffer()
                b.resize(width: size?.width ?? 640, height: size?.height ?? 360)
                b.gray.update(repeating: level, count: b.width * b.height)
                frames.append(b)
            }
        }
    }

    func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard index < frames.count else { return nil }
        buffer.copy(from: frames[index])
        defer { index += 1 }
        return FrameInfo(index: index, time: Double(index) / 30, monotonicNanoseconds: UInt64(index) * 33_333_333)
    }

    func close() {}
}

extension ModelTests {
    /// One bad frame must not end a face and what it is doing: a key held for `smile` would be released and
    /// pressed again (issue: single_face.mp4 with frame 40 grey gave smile ended, faceLost, faceFound, smile
    /// began; every other frame black gave faceFound/faceLost on every frame and lost the smile and the blink).
    @Suite
    struct FacePresenceTests {
        static let original = (0..<72).map { SplicedSource.Piece.clip("single_face.mp4", $0) }

        func summary(_ pieces: [SplicedSource.Piece]) throws -> [String] {
            try pipeline().events(of: try SplicedSource(pieces)).filter { $0.isOccurrence || $0.phase == .ended }
                .map { "\($0.event)\($0.phase.map { ":" + $0.rawValue } ?? "")" }
        }

        @Test func aGreyFrameInTheMiddleChangesNothing() throws {
            var pieces = Self.original
            pieces[40] = .flat(128)
            #expect(try summary(pieces) == summary(Self.original))
            #expect(try summary(pieces) == ["faceFound", "smile:began", "blink:occurred"])
        }

        @Test func everyOtherFrameBlackKeepsTheFaceTheSmileAndTheBlink() throws {
            // Frames 1, 3, ..., 69 black (not the blink's 27 and 29), 70 and 71 as recorded.
            let pieces = Self.original.enumerated().map { i, p in
                i % 2 == 1 && i < 70 && i != 27 && i != 29 ? .flat(0) : p
            }
            let events = try summary(pieces)
            #expect(events == ["faceFound", "smile:began", "blink:occurred"], "\(events)")
        }

        @Test func aRecordingThatEndsOnBlackLosesTheFaceAtTheFirstBlackFrame() throws {
            let pieces = Array(Self.original[0..<60]) + Array(repeating: .flat(0), count: 4)
            let events = try pipeline().events(of: try SplicedSource(pieces))
            let lost = try #require(events.first { $0.event == "faceLost" })
            #expect(lost.frame == 60)
            #expect(events.contains { $0.event == "smile" && $0.phase == .ended && $0.frame == 60 })
        }

        @Test func aFaceGoneForTwoFramesStaysAndOneGoneForLongerIsLostWhereItWent() throws {
            let noFace = SplicedSource.Piece.clip("no_face.mp4", 10)
            var brief = Self.original
            brief[40] = noFace
            brief[41] = noFace
            #expect(try summary(brief) == ["faceFound", "smile:began", "blink:occurred"])

            let gone = Array(Self.original[0..<50]) + Array(repeating: noFace, count: 10)
            let events = try pipeline().events(of: try SplicedSource(gone))
            let lost = try #require(events.first { $0.event == "faceLost" })
            #expect(lost.frame == 50, "dated at the first frame without the face, not when the grace ran out")
            let smileEnd = try #require(events.first { $0.event == "smile" && $0.phase == .ended })
            #expect(smileEnd.frame == 50)
        }

        @Test func aFaceThatLeavesInTheLastFramesIsLostAtTheEnd() throws {
            // Gone for two frames when the recording ends: within the grace period, but the input is over.
            let pieces = Array(Self.original[0..<50]) + Array(repeating: .clip("no_face.mp4", 10), count: 2)
            let events = try pipeline().events(of: try SplicedSource(pieces))
            #expect(events.last?.event == "faceLost" && events.last?.frame == 50, "\(events.map(\.event))")
        }

        /// A newcomer's finding: a smile held when the lens went dark stayed "active", and a key held for it
        /// stayed down, for as long as the dark lasted (6 s here, for ever on a covered camera). Darkness
        /// loses the face after `darkFaceLostAfter` (2 s), dated at the first dark frame; shorter dark
        /// spells keep it.
        @Test func aFaceBehindLongDarknessIsLostWhereTheDarkBegan() throws {
            let dark = Array(Self.original[0..<40]) + Array(repeating: .flat(0), count: 66)
                + Array(Self.original[40..<72])
            let p = pipeline()
            var events: [ExpressionEvent] = []
            var decidedAt: Int?
            try p.run(try SplicedSource(dark)) { info, _ in
                if decidedAt == nil, p.engine.events.contains(where: { $0.event == "faceLost" }) { decidedAt = info.index }
                events += p.engine.events
            }
            let lost = try #require(events.first { $0.event == "faceLost" })
            #expect(lost.frame == 40, "dated at the first dark frame")
            #expect(decidedAt == 100, "decided once the dark had lasted 2 s, not at the end of the recording")
            #expect(events.contains { $0.event == "smile" && $0.phase == .ended && $0.frame == 40 })
            #expect(events.filter { $0.event == "faceFound" }.map(\.frame) == [0, 106])
            let brief = Array(Self.original[0..<40]) + Array(repeating: .flat(0), count: 54)
                + Array(Self.original[40..<72])
            #expect(try summary(brief) == ["faceFound", "smile:began", "blink:occurred"])
        }

        @Test func aSolidColourRecordingHasNoFaceAndNoEvent() throws {
            #expect(try summary(Array(repeating: .flat(90), count: 30)).isEmpty)
        }
    }
}
