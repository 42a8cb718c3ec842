import Glibc
import Testing
import WinkCore

struct ErrnoTests {
    @Test func describesItselfByNameAndStrerrorText() {
        #expect(Errno(code: ECONNRESET).name == "ECONNRESET")
        #expect(Errno(code: ECONNRESET).description == "ECONNRESET: Connection reset by peer")
        #expect(Errno(code: ENOENT).message == "No such file or directory")
        #expect(Errno(code: EWOULDBLOCK).name == "EAGAIN")  // the same value on Linux
        #expect(Errno(code: 9999).name == "errno 9999")
    }

    @Test func retriesEINTRAndReturnsTheValue() throws {
        var calls = 0
        let value = try valueOrErrno(retryOnInterrupt: true) { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(value == 42)
        #expect(calls == 3)
    }

    @Test func throwsOtherErrorsAtOnceWithTheirName() {
        var calls = 0
        #expect(throws: Errno(code: ECONNRESET)) {
            try valueOrErrno(retryOnInterrupt: true) { () -> Int32 in
                calls += 1
                errno = ECONNRESET
                return -1
            }
        }
        #expect(calls == 1)
        let error = #expect(throws: Errno.self) {
            try valueOrErrno(retryOnInterrupt: true) { () -> Int in
                errno = EBADF
                return -1
            }
        }
        #expect(error.map { "\($0)" } == "EBADF: Bad file descriptor")
    }

    @Test func withoutRetryEINTRIsThrown() {
        #expect(throws: Errno(code: EINTR)) {
            try valueOrErrno(retryOnInterrupt: false) { () -> Int in
                errno = EINTR
                return -1
            }
        }
    }

    @Test func retryingOnInterruptRepeatsAThrowingCall() throws {
        var calls = 0
        let value = try retryingOnInterrupt { () throws(Errno) -> String in
            calls += 1
            if calls == 1 { throw Errno(code: EINTR) }
            return "done"
        }
        #expect(value == "done" && calls == 2)
        #expect(throws: Errno(code: ENODEV)) {
            try retryingOnInterrupt { () throws(Errno) -> Int in throw Errno(code: ENODEV) }
        }
    }
}
