import EventServer
import Testing

struct EventServerErrorTests {
    @Test func exitCodes() {
        #expect(EventServerError(.inUse, path: "/s", reason: "in use").exitCode == .unavailable)
        #expect(EventServerError(.pathTooLong, path: "/s", reason: "long").exitCode == .usage)
    }
}
