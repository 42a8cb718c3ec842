@testable import Capture
import Glibc
import Testing
import WinkCore

struct CaptureErrorTests {
    @Test func exitCodesFollowSysexits() {
        #expect(CaptureError(.missing, subject: "/x", reason: "no such file").exitCode == .noInput)
        #expect(CaptureError(.notMedia, subject: "/x", reason: "not a video").exitCode == .dataError)
        #expect(CaptureError(.busy, subject: "/dev/video0", reason: "busy").exitCode == .unavailable)
        #expect(CaptureError(.missing, subject: "/x", reason: "no such file").description == "/x: no such file")
    }

    /// Issue 15: a failed call is told by its errno's name, never `Errno(code: 104)` or the bare strerror text.
    @Test func aFailedCallIsToldByItsErrnoName() {
        #expect(V4L2Camera.error(Errno(code: EPROTO), path: "/dev/video0", during: "VIDIOC_DQBUF").description
            == "/dev/video0: VIDIOC_DQBUF failed: EPROTO: Protocol error")
        #expect(V4L2Camera.error(Errno(code: ENODEV), path: "/dev/video0", during: "VIDIOC_DQBUF").description
            == "/dev/video0: camera disconnected (VIDIOC_DQBUF: ENODEV: No such device)")
    }
}
