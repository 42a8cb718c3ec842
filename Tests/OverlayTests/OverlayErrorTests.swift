import Overlay
import Testing

struct OverlayErrorTests {
    @Test func brokenImagesExit65() {
        #expect(OverlayError(.notDecodable, path: "/a.png", reason: "truncated").exitCode == .dataError)
    }
}
