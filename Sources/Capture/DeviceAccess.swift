import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a "permission denied" line about a V4L2 device names: who this process is (uid, groups), who owns
/// the device and its mode, and whether it runs under systemd (whose device filter, `DeviceAllow=`, can deny
/// a device its mode allows). Read when an `open` fails with `EACCES`/`EPERM`; a fake funnel scripts it.
public struct DeviceAccess: Sendable, Equatable {
    /// A user or group id with its name, when the name is known.
    public struct ID: Sendable, Equatable, CustomStringConvertible {
        /// The numeric uid or gid.
        public var id: UInt32
        /// The user or group name (`getpwuid_r`/`getgrgid_r`); nil when none is known.
        public var name: String?
        /// The id `id` with its name, if known.
        public init(_ id: UInt32, _ name: String?) {
            self.id = id
            self.name = name
        }
        /// `1000 (alice)`, or `1000` without a name.
        public var description: String { name.map { "\(id) (\($0))" } ?? "\(id)" }
        var nameOrID: String { name ?? "\(id)" }
    }

    /// The device node's owner, group and mode.
    public struct Node: Sendable, Equatable {
        /// The node's owning user (`st_uid`).
        public var owner: ID
        /// The node's group (`st_gid`).
        public var group: ID
        /// `st_mode`: the file type and permission bits.
        public var mode: UInt32
        /// A node's facts; `mode` is the whole `st_mode`.
        public init(owner: ID, group: ID, mode: UInt32) {
            self.owner = owner
            self.group = group
            self.mode = mode
        }
        /// `crw-rw----`.
        public var modeString: String {
            let type: Character =
                switch mode & UInt32(S_IFMT) {
                case UInt32(S_IFCHR): "c"
                case UInt32(S_IFBLK): "b"
                case UInt32(S_IFDIR): "d"
                case UInt32(S_IFLNK): "l"
                default: "-"
                }
            var text = String(type)
            for shift in [6, 3, 0] {
                let bits = (mode >> UInt32(shift)) & 7
                text += (bits & 4 != 0 ? "r" : "-") + (bits & 2 != 0 ? "w" : "-") + (bits & 1 != 0 ? "x" : "-")
            }
            return text
        }
    }

    /// The effective user.
    public var user: ID
    /// The effective group first, then the supplementary groups.
    public var groups: [ID]
    /// The device, nil when it could not be examined (stat failed).
    public var node: Node?
    /// Whether the process runs as a systemd service (`$INVOCATION_ID` or `$NOTIFY_SOCKET` set), where a
    /// unit's `DevicePolicy=`/`DeviceAllow=` filter can deny a device whatever its mode.
    public var underSystemd: Bool

    /// The facts as given (tests; `current(path:)` reads the real ones).
    public init(user: ID, groups: [ID], node: Node?, underSystemd: Bool) {
        self.user = user
        self.groups = groups
        self.node = node
        self.underSystemd = underSystemd
    }

    /// The facts for this process and the device at `path` (following symlinks, as open does).
    public static func current(
        path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> DeviceAccess {
        let uid = geteuid()
        let gid = getegid()
        var ids = [gid]
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let n = getgroups(count, &list)
            if n > 0 { ids += list.prefix(Int(n)).filter { $0 != gid } }
        }
        var node: Node?
        var st = stat()
        if stat(path, &st) == 0 {
            node = Node(
                owner: ID(st.st_uid, userName(st.st_uid)), group: ID(st.st_gid, groupName(st.st_gid)),
                mode: st.st_mode)
        }
        let systemd = [environment["INVOCATION_ID"], environment["NOTIFY_SOCKET"]].contains { !($0 ?? "").isEmpty }
        return DeviceAccess(
            user: ID(uid, userName(uid)), groups: ids.map { ID($0, groupName($0)) }, node: node,
            underSystemd: systemd)
    }

    /// The reason for a `CaptureError`: who asked, what the device allows, and what to do.
    /// - Parameter serviceGroup: the group V4L2 devices normally belong to (`video` on Debian).
    public func explanation(serviceGroup: String = "video") -> String {
        let groupList = groups.map(\.description).joined(separator: ", ")
        var text = "permission denied for uid \(user) with groups \(groupList)"
        guard let node else {
            text += "; the device cannot be examined either"
            return text + systemdAdvice(serviceGroup: serviceGroup)
        }
        text +=
            "; the device is \(node.modeString) \(node.owner.nameOrID):\(node.group.nameOrID) "
            + "(uid \(node.owner.id), gid \(node.group.id))"
        let inGroup = groups.contains { $0.id == node.group.id }
        let groupMay = node.mode & 0o060 == 0o060
        let ownerMay = node.owner.id == user.id && node.mode & 0o600 == 0o600
        let who = user.name ?? "the user"
        if ownerMay || (inGroup && groupMay) || node.mode & 0o006 == 0o006 {
            text += ", which allows this process, so something else denies it"
            text += underSystemd ? "" : " (an ACL, a security module, or a container's device filter)"
        } else if groupMay {
            text +=
                "; add \(who) to group '\(node.group.nameOrID)' (sudo usermod -aG \(node.group.nameOrID) \(who)), "
                + "then log in again"
        } else {
            text +=
                "; its group may not read and write it: a udev rule should give it group '\(serviceGroup)' and mode "
                + "0660"
        }
        return text + systemdAdvice(serviceGroup: serviceGroup)
    }

    private func systemdAdvice(serviceGroup: String) -> String {
        guard underSystemd else { return "" }
        return "; under systemd the unit must let the device in: DeviceAllow=char-video4linux rw (as the shipped "
            + "winkd units do) and, for a system service, SupplementaryGroups=\(serviceGroup)"
    }

    private static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return String(cString: entry.pw_name)
    }

    private static func groupName(_ gid: gid_t) -> String? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return String(cString: entry.gr_name)
    }
}
