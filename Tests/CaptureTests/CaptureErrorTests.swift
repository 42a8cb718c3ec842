import Capture
import Testing
import WinkCore

struct CaptureErrorTests {
    @Test func exitCodesFollowSysexits() {
        #expect(CaptureError(.missing, source: "/x", reason: "no such file").exitCode == .noInput)
        #expect(CaptureError(.notMedia, source: "/x", reason: "not a video").exitCode == .dataError)
        #expect(CaptureError(.busy, source: "/dev/video0", reason: "busy").exitCode == .unavailable)
        #expect(CaptureError(.missing, source: "/x", reason: "no such file").description == "/x: no such file")
    }
}
