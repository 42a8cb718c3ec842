import Overlay
import Testing

struct OverlayErrorTests {
    @Test func brokenImagesExit65() {
        #expect(OverlayError(.notDecodable, subject: "/a.png", reason: "truncated").exitCode == .dataError)
    }
}
