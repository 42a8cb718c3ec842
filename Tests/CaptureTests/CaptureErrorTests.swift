import Capture
import Testing
import WinkCore

struct CaptureErrorTests {
    @Test func exitCodesFollowSysexits() {
        #expect(CaptureError(.missing, subject: "/x", reason: "no such file").exitCode == .noInput)
        #expect(CaptureError(.notMedia, subject: "/x", reason: "not a video").exitCode == .dataError)
        #expect(CaptureError(.busy, subject: "/dev/video0", reason: "busy").exitCode == .unavailable)
        #expect(CaptureError(.missing, subject: "/x", reason: "no such file").description == "/x: no such file")
    }
}
