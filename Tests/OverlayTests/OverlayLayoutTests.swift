import Foundation
import Overlay
import Testing
import WinkCore

struct OverlayLayoutTests {
    func parse(_ json: String) throws -> OverlayLayout {
        try OverlayLayout(json: Data(json.utf8), baseDirectory: "/layouts", name: "test.json")
    }

    /// The reason of the `.badLayout` error `json` raises (nil if it parses).
    func badLayoutReason(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch let error as OverlayError {
            #expect(error.code == .badLayout)
            #expect(error.exitCode.rawValue == 78)
            return error.reason
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    /// A layer's second "image" was dropped without a word (JSON keeps one of them).
    @Test func aKeyGivenTwiceIsRefused() {
        let reason = badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "image": "b.png"}]}"#)
        #expect(reason == "layers[0].image: given twice in one object; JSON keeps only one of them")
    }

    @Test func specExampleParsesWithDefaults() throws {
        let layout = try parse(
            """
            {"layers": [
              {"feature": "eyes", "image": "sunglasses.png", "sizeRatio": {"width": 1.4, "height": 3.0},
               "offset": {"x": 0.0, "y": 0.1}, "rotate": true, "opacity": 1.0},
              {"feature": "mouth", "image": "moustache.png", "sizeRatio": {"width": 1.2, "height": 1.0},
               "offset": {"x": 0.0, "y": -0.6}},
              {"feature": "leftEye", "image": "/abs/patch.png", "rotate": false, "opacity": 0.25, "sizeRatio": 2}
            ]}
            """)
        #expect(layout.layers.count == 3)
        #expect(
            layout.layers[0]
                == OverlayLayer(
                    feature: .eyes, image: "/layouts/sunglasses.png",
                    sizeRatio: [1.4, 3.0], offset: [0, 0.1]))
        #expect(layout.layers[1].image == "/layouts/moustache.png")
        #expect(layout.layers[1].rotate == true)
        #expect(layout.layers[1].opacity == 1)
        #expect(layout.layers[1].offset == [0, -0.6])
        #expect(
            layout.layers[2]
                == OverlayLayer(
                    feature: .leftEye, image: "/abs/patch.png", sizeRatio: [2, 2],
                    rotate: false, opacity: 0.25))
    }

    @Test func everyFeatureNameMapsToItsIBUGGroup() throws {
        #expect(FaceFeature.rightEye.group.indices == 36...41)
        #expect(FaceFeature.leftEye.group.indices == 42...47)
        #expect(FaceFeature.rightEyebrow.group.indices == 17...21)
        #expect(FaceFeature.leftEyebrow.group.indices == 22...26)
        #expect(FaceFeature.eyes.group.indices == 36...47)
        #expect(FaceFeature.nose.group.indices == 27...35)
        #expect(FaceFeature.mouth.group.indices == 48...67)
        #expect(FaceFeature.jaw.group.indices == 0...16)
        #expect(FaceFeature.face.group.indices == 0...67)
        for feature in FaceFeature.allCases {
            let layout = try parse(#"{"layers": [{"feature": "\#(feature.rawValue)", "image": "a.png"}]}"#)
            #expect(layout.layers[0].feature == feature)
        }
    }

    @Test func badLayoutsNameTheKey() throws {
        #expect(badLayoutReason("{\"layers\": [") == "not valid JSON (Unexpected end of file during JSON parse.)")
        // A number beyond a Double ("opacity": 1e999) was "not valid JSON" without a word of where.
        #expect(badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "opacity": 1e999}]}"#)
                == "not valid JSON (Number 1e999 is not representable in Swift.)")
        #expect(badLayoutReason("{}") == "layers: missing")
        #expect(badLayoutReason(#"{"layers": [{"image": "a.png"}]}"#) == "layers[0].feature: missing")
        #expect(badLayoutReason(#"{"layers": [{"feature": "eyes"}]}"#) == "layers[0].image: missing")
        #expect(
            badLayoutReason(
                #"{"layers": [{"feature": "eyes", "image": "a.png"}, {"feature": "ears", "image": "b.png"}]}"#)?
                .hasPrefix("layers[1].feature: unknown feature 'ears'") == true)
        #expect(
            badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "sizeRatio": {"width": -1}}]}"#)?
                .hasPrefix("layers[0].sizeRatio.width: expected a positive number") == true)
        #expect(
            badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "sizeRatio": {"height": "big"}}]}"#)
                == "layers[0].sizeRatio.height: expected a number")
        #expect(
            badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "offset": {"x": "left"}}]}"#)
                == "layers[0].offset.x: expected a number")
        #expect(
            badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "opacity": 1.5}]}"#)?
                .hasPrefix("layers[0].opacity: expected a number in 0...1") == true)
        #expect(badLayoutReason(#"{"layers": ["eyes"]}"#) == "layers[0]: expected an object")
        // Numbers beyond a Float's range were "not valid JSON" (or, for a plain sizeRatio, "expected an object").
        let beyond = "a number beyond this setting's range (at most 3.4e38 either way)"
        for (setting, place) in [(#""offset": {"x": 1e39, "y": 0}"#, "offset.x"),
                                 (#""sizeRatio": {"width": 1e100}"#, "sizeRatio.width"),
                                 (#""opacity": -1e308"#, "opacity"), (#""sizeRatio": 1e39"#, "sizeRatio")] {
            let json = #"{"layers": [{"feature": "eyes", "image": "a.png", \#(setting)}]}"#
            #expect(badLayoutReason(json) == "layers[0].\(place): \(beyond)", "\(setting)")
        }
        let either = "layers[0].sizeRatio: expected a positive number or an object with width and height"
        for ratio in [#""2""#, "[1, 2]", "true"] {
            #expect(badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "sizeRatio": \#(ratio)}]}"#)
                    == either)
        }
        #expect(try parse(#"{"layers": [{"feature": "eyes", "image": "a.png", "sizeRatio": 3.4e38}]}"#)
                    .layers[0].sizeRatio.x == 3.4e38)
        #expect(
            badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "rotate": "yes"}]}"#)
                == "layers[0].rotate: expected true or false")
        #expect(
            badLayoutReason(#"{"layers": [{"feature": "eyes", "image": "a.png", "opactiy": 0.5}]}"#)?
                .hasPrefix("layers[0].opactiy: unknown key") == true)
        #expect(badLayoutReason(#"{"layers": {"feature": "eyes"}}"#) == "layers: expected a list")
    }

    @Test func missingLayoutFileExits66() {
        #expect {
            try OverlayLayout.load(path: "/nonexistent/layout.json")
        } throws: { error in
            (error as? OverlayError)?.code == .missing && (error as? ExitCodeError)?.exitCode.rawValue == 66
                && (error as? OverlayError)?.description.hasPrefix("/nonexistent/layout.json:") == true
        }
    }

    @Test func imagePathsResolveAgainstTheLayoutFolder() throws {
        let layout = try OverlayLayout.load(
            path: Paths.resources.appendingPathComponent("glasses_and_moustache.json").path)
        #expect(layout.layers.count == 2)
        for layer in layout.layers {
            #expect(FileManager.default.fileExists(atPath: layer.image), "\(layer.image)")
        }
        // And the renderer decodes them.
        let renderer = try OverlayRenderer(layout: layout)
        #expect(renderer.layers.count == 2)
    }

    @Test func missingImageExits66NamingIt() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("layout.json").path
        try Data(#"{"layers": [{"feature": "nose", "image": "gone.png"}]}"#.utf8).write(to: URL(fileURLWithPath: path))
        let layout = try OverlayLayout.load(path: path)
        #expect {
            try OverlayRenderer(layout: layout)
        } throws: { error in
            guard let e = error as? OverlayError else { return false }
            return e.code == .missing && e.exitCode.rawValue == 66
                && e.subject == folder.appendingPathComponent("gone.png").path
        }
    }

    @Test func brokenImagesInALayoutExit65() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for broken in ["corrupt_truncated.png", "not_a_png.png"] {
            let path = folder.appendingPathComponent("layout.json").path
            let json = #"{"layers": [{"feature": "nose", "image": "\#(Paths.overlay(broken))"}]}"#
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            #expect {
                try OverlayRenderer(layout: try OverlayLayout.load(path: path))
            } throws: { error in
                guard let e = error as? OverlayError else { return false }
                return e.code == .notDecodable && e.exitCode.rawValue == 65 && e.description.contains(broken)
                    && e.description.hasSuffix("(image of layers[0])")
            }
        }
    }
}
