import CaptureTestSupport
import Foundation
import Glibc
import Testing

@testable import Capture

/// Issue 13, fault 7: a camera that cannot be opened for want of permission used to say only
/// "permission denied (is the user in the 'video' group?)": not who the process is, not the device's
/// owner, group and mode, and nothing about systemd's device filter under the shipped units.
struct DeviceAccessTests {
    static let alice = DeviceAccess.ID(1000, "alice")
    static let video = DeviceAccess.ID(44, "video")
    /// `crw-rw---- root:video`, as udev makes a UVC camera on Debian.
    static let camera = DeviceAccess.Node(owner: .init(0, "root"), group: video, mode: UInt32(S_IFCHR) | 0o660)

    func denied(_ access: DeviceAccess) throws -> CaptureError {
        let fake = FakeV4L2Device(formats: [FakeV4L2Device.offer(.yuyv, "YUYV", [(640, 480, [30])])])
        fake.nodes["/dev/video0"]?.openError = EACCES
        fake.nodes["/dev/video0"]?.access = access
        let error = try #require(throws: CaptureError.self) { try V4L2Camera(path: "/dev/video0", syscalls: fake) }
        #expect(error.code == .unreadable && error.exitCode == .noInput)
        #expect(!error.description.contains("\n"))
        #expect(fake.released)
        return error
    }

    @Test func aUserOutsideTheDevicesGroupIsToldWhoTheyAreWhatTheDeviceAllowsAndWhatToDo() throws {
        let error = try denied(
            DeviceAccess(
                user: Self.alice, groups: [.init(1000, "alice"), .init(27, "sudo")],
                node: Self.camera, underSystemd: false))
        #expect(
            error.description == "/dev/video0: permission denied for uid 1000 (alice) with groups 1000 (alice), "
                + "27 (sudo); the device is crw-rw---- root:video (uid 0, gid 44); add alice to group 'video' "
                + "(sudo usermod -aG video alice), then log in again")
    }

    @Test func underSystemdTheLineNamesDeviceAllow() throws {
        // The system unit's user `winkd` is in group video (SupplementaryGroups=), yet denied: the unit's
        // device filter, not the mode.
        let winkd = DeviceAccess.ID(996, "winkd")
        let inGroup = try denied(
            DeviceAccess(
                user: winkd, groups: [.init(996, "winkd"), Self.video],
                node: Self.camera, underSystemd: true))
        #expect(inGroup.description.contains("uid 996 (winkd) with groups 996 (winkd), 44 (video)"))
        #expect(
            inGroup.description.contains(
                "crw-rw---- root:video (uid 0, gid 44), which allows this process, so something else denies it"))
        #expect(
            inGroup.description.hasSuffix(
                "; under systemd the unit must let the device in: "
                    + "DeviceAllow=char-video4linux rw (as the shipped winkd units do) and, for a system service, "
                    + "SupplementaryGroups=video"), "\(inGroup.description)")
        // Not in the group, under systemd: both the group and the unit's settings.
        let outside = try denied(
            DeviceAccess(
                user: winkd, groups: [.init(996, "winkd")], node: Self.camera,
                underSystemd: true))
        #expect(
            outside.description.contains("add winkd to group 'video'") && outside.description.contains("DeviceAllow="))
        // Outside systemd, a device its mode allows is denied by something else; no unit advice.
        let acl = try denied(
            DeviceAccess(
                user: Self.alice, groups: [.init(1000, "alice"), Self.video],
                node: Self.camera, underSystemd: false))
        #expect(acl.description.contains("an ACL, a security module") && !acl.description.contains("DeviceAllow"))
    }

    @Test func aDeviceItsGroupMayNotUseAndNamesThatAreUnknown() throws {
        let root600 = DeviceAccess.Node(owner: .init(0, "root"), group: .init(0, "root"), mode: UInt32(S_IFCHR) | 0o600)
        let error = try denied(
            DeviceAccess(
                user: .init(1000, nil), groups: [.init(1000, nil)], node: root600,
                underSystemd: false))
        #expect(error.description.contains("uid 1000 with groups 1000; the device is crw------- root:root"))
        #expect(error.description.contains("a udev rule should give it group 'video' and mode 0660"))
        let gone = try denied(DeviceAccess(user: Self.alice, groups: [Self.alice], node: nil, underSystemd: false))
        #expect(gone.description.hasSuffix("the device cannot be examined either"))
    }

    @Test func theRealFactsComeFromTheProcessTheFileAndTheEnvironment() {
        let facts = DeviceAccess.current(path: "/dev/null", environment: ["INVOCATION_ID": "0123abcd"])
        #expect(facts.user.id == geteuid() && facts.groups.first?.id == getegid())
        #expect(facts.node?.modeString == "crw-rw-rw-" && facts.node?.owner.id == 0)
        #expect(facts.underSystemd)
        #expect(
            DeviceAccess.current(path: "/dev/null", environment: ["NOTIFY_SOCKET": "/run/systemd/notify"]).underSystemd)
        #expect(!DeviceAccess.current(path: "/dev/null", environment: [:]).underSystemd)
        #expect(DeviceAccess.current(path: "/nonexistent/video0", environment: [:]).node == nil)
    }
}
