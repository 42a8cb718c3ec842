import Testing
import WinkCore

struct DescribeErrorTests {
    enum Kind: ExitCodeKind {
        case busy
        var exitCode: ExitCode { .unavailable }
    }

    struct Plain: Error, CustomStringConvertible {
        var description: String { "something else" }
    }

    /// winkd's status lines name the device in `source`; their message said it again
    /// ("camera_busy /dev/video7: /dev/video7: device in use").
    @Test func anErrorAboutTheNamedThingGivesItsReasonAlone() {
        let busy = SubjectError(Kind.busy, subject: "/dev/video7", reason: "device in use")
        #expect(describeError(busy) == "/dev/video7: device in use")
        #expect(describeError(busy, besides: "/dev/video7") == "device in use")
        #expect(describeError(busy, besides: "/dev/video10") == "/dev/video7: device in use")
        #expect(describeError(Plain(), besides: "/dev/video7") == "something else")
    }
}
