import Capture
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

/// Variants derived from the fixtures inside the test: the same events, no extra ones.
extension ModelTests {
    @Suite
    struct VariantTests {
        func names(_ clip: String, _ t: FrameTransform, mirrored: Bool = false) throws -> [String] {
            let source = TransformedSource(try openMediaFile(path: Fixtures.video(clip)), t)
            return occurrences(try pipeline(mirrored: mirrored).events(of: source))
        }

        @Test func flippedLeftWinkIsARightWinkUnlessDeclaredMirrored() throws {
            let flipped = try names("single_face_wink_left.mp4", FrameTransform(flip: true))
            #expect(
                flipped.contains("winkRight") && !flipped.contains("winkLeft") && !flipped.contains("blink"),
                "\(flipped)")
            let declared = try names("single_face_wink_left.mp4", FrameTransform(flip: true), mirrored: true)
            #expect(
                declared.contains("winkLeft") && !declared.contains("winkRight") && !declared.contains("blink"),
                "\(declared)")
        }

        static let clips = [
            ("single_face.mp4", ["faceFound", "smile", "blink"]),
            ("single_face_wink_left.mp4", ["faceFound", "smile", "winkLeft"]),
            ("single_face_wink_right.mp4", ["faceFound", "smile", "winkRight"]),
        ]

        @Test(arguments: [
            ("rotated 25 degrees", FrameTransform(degrees: 25, resizeFrame: false)),
            ("rotated -25 degrees", FrameTransform(degrees: -25, resizeFrame: false)),
            ("face about 80 px wide", FrameTransform(scale: 0.34)),
            ("darkened to 35% with sensor noise", FrameTransform(gain: 0.35, noise: 4)),
        ])
        func sameEventsOnVariants(_ label: String, _ t: FrameTransform) throws {
            for (clip, expected) in Self.clips {
                let got = try names(clip, t)
                #expect(got.sorted() == expected.sorted(), "\(label), \(clip): \(got)")
            }
        }

        @Test func aStillFrameHeldTenSecondsGivesOnlyFaceFound() throws {
            let source = try RepeatedFrameSource(
                try openMediaFile(path: Fixtures.video("single_face.mp4")), seconds: 10)
            #expect(occurrences(try pipeline().events(of: source)) == ["faceFound"])
        }
    }
}
