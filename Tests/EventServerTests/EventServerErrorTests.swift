import EventServer
import Testing

struct EventServerErrorTests {
    @Test func exitCodes() {
        #expect(EventServerError(.inUse, subject: "/s", reason: "in use").exitCode == .unavailable)
        #expect(EventServerError(.pathTooLong, subject: "/s", reason: "long").exitCode == .usage)
    }
}
