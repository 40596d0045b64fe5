@_spi(Kernel) import Simulator

/// A participant's permission on a share (`CKShare.ParticipantPermission`).
public enum SharePermission: String, CaseIterable, Hashable, Sendable {
  case readOnly = "read-only"
  case readWrite = "read-write"
}

/// What a user does to a share in the system's sharing UI on a device, names resolved: the
/// share's number (its index in ``WorldConfig/shares``) and accounts by index. The device must
/// be online and signed in, and the server up (the sharing UI saves the `CKShare` at once, or
/// fails and changes nothing).
package enum ShareAction: Hashable, Sendable {
  /// The device's account shares its zone (a zone-wide `CKShare`).
  case share(Int32)
  /// The owner adds `account` as a participant, invited with `permission`.
  case invite(Int32, account: Int32, SharePermission)
  /// The device's account accepts its invitation (`CKAcceptSharesOperation`).
  case accept(Int32)
  /// The device's account leaves the share (deletes it from its shared database).
  case leave(Int32)
  /// The owner stops sharing (deletes the `CKShare`).
  case unshare(Int32)
  /// The owner changes a participant's permission.
  case permission(Int32, account: Int32, SharePermission)
  /// The owner removes a participant.
  case remove(Int32, account: Int32)

  package var share: Int32 {
    switch self {
    case .share(let s), .invite(let s, _, _), .accept(let s), .leave(let s), .unshare(let s), .permission(let s, _, _), .remove(let s, _): s
    }
  }

  /// The action's number in traces.
  package var code: Int64 {
    switch self {
    case .share: 1
    case .invite: 2
    case .accept: 3
    case .leave: 4
    case .unshare: 5
    case .permission: 6
    case .remove: 7
    }
  }
}

/// One `CKShare`: of an account's zone, or of a record hierarchy (`root`).
package struct Share: Hashable, Sendable {
  /// The owner's account (-1 until the share is made).
  package var owner: Int32 = -1
  /// The root record of a hierarchy share (`CKShare(rootRecord:)`): the share covers it and
  /// every record whose chain of `parent` references leads to it. Nil: a zone-wide share.
  package var root: RecordKey?
  /// The zone a zone-wide share shares (0: the app's zone).
  package var zone: Int32 = 0
  /// Whether it is shared now (made, not stopped).
  package var active = false
  /// The participants, in the order they were invited.
  package var participants: [Participant] = []

  package struct Participant: Hashable, Sendable {
    package var account: Int32
    package var permission: SharePermission
    /// Accepted, and neither left nor removed since.
    package var accepted: Bool
  }

  /// The permission `account` has through this share now (nil: none).
  package func permission(of account: Int32) -> SharePermission? {
    guard active, let p = participants.first(where: { $0.account == account }), p.accepted else { return nil }
    return p.permission
  }
}

/// A change in who may see a share's records: `permission` nil when access ended.
package struct AccessChange: Hashable, Sendable {
  package var time: VirtualTime
  package var share: Int32
  package var account: Int32
  package var permission: SharePermission?
  /// How access ended (nil while it lasts): removed, left, unshared, the zone deleted.
  package var ended: AccessEnd?
}

/// How a participant's access ended.
package enum AccessEnd: String, Hashable, Sendable {
  case removed, left, unshared
  case zoneDeleted = "zone-deleted"
}

/// The world's shares and each account's shared database.
package struct SharingState: Sendable {
  package var shares: [Share]
  /// Per account: its shared database's change log (position, record), positions increasing,
  /// and its head. A record is logged when it changes on its owner's server while the account
  /// has access, and when the account gains or loses access to it.
  var logs: [[(position: Int64, key: RecordKey)]]
  var heads: [Int64]
  /// Every change in access, in order.
  package var history: [AccessChange] = []
  /// Hierarchy shares refused because the root's change tag had moved (`share-root=as-known`):
  /// the owner's device tries again once it knows another tag for the root. One left at settle
  /// is a share the user made that never was (`stalled-sync`).
  package var refused: [RefusedShare] = []
  /// Whether access is judged per record: some share is of a record hierarchy or of a named
  /// zone, or some record is in a named zone (set once the shares' roots and zones are known).
  package internal(set) var judgesPerRecord = false

  /// A hierarchy share the server refused as changed, waiting for another try.
  package struct RefusedShare: Hashable, Sendable {
    package var share: Int32
    package var device: Int32
    /// The root's change tag the device last tried with.
    package var known: Int64
    /// When it was first refused, and how many times.
    package var since: VirtualTime
    package var attempts: Int
  }

  init(shares: Int, accounts: Int) {
    self.shares = Array(repeating: Share(), count: shares)
    logs = Array(repeating: [], count: accounts)
    heads = Array(repeating: 0, count: accounts)
  }

  /// The permission `account` has on the records of `owner` through a share (nil: none; the
  /// owner's own records are not asked about here).
  package func permission(of account: Int32, onRecordsOf owner: Int32) -> SharePermission? {
    var best: SharePermission?
    for s in shares where s.owner == owner {
      switch s.permission(of: account) {
      case .readWrite: return .readWrite
      case .readOnly: best = .readOnly
      case nil: break
      }
    }
    return best
  }

  /// The accounts other than `owner` that may see `owner`'s records now.
  func readers(of owner: Int32) -> [Int32] {
    var out: [Int32] = []
    for s in shares where s.owner == owner && s.active {
      for p in s.participants where p.accepted && !out.contains(p.account) { out.append(p.account) }
    }
    return out
  }

  mutating func append(_ key: RecordKey, for account: Int32) {
    heads[Int(account)] += 1
    logs[Int(account)].append((heads[Int(account)], key))
  }
}

extension SyncWorld {
  /// Whether the scenario shares anything: only then do devices fetch a shared database.
  package var hasSharing: Bool { !config.shares.isEmpty }

  /// The permission account `a` has on record `key` now: read-write for its own records, what a
  /// share gives it for another account's, nil for none.
  package func permission(of a: Int32, on key: RecordKey) -> SharePermission? {
    let owner = Int32(account(ofRecord: key))
    if owner == a { return .readWrite }
    guard sharing.judgesPerRecord else { return sharing.permission(of: a, onRecordsOf: owner) }
    var best: SharePermission?
    for s in sharing.shares where s.owner == owner && covers(s, key) {
      switch s.permission(of: a) {
      case .readWrite: return .readWrite
      case .readOnly: best = .readOnly
      case nil: break
      }
    }
    return best
  }

  /// Whether `share` covers record `key` of its owner: every record for a zone-wide share; for
  /// a hierarchy share, its root and every record whose chain of `parent` references leads to
  /// it (Apple, `CKRecord.parent`: "CloudKit shares the hierarchy when a CKShare includes a
  /// referenced record").
  package func covers(_ share: Share, _ key: RecordKey) -> Bool {
    guard let root = share.root else { return zone(of: key) == share.zone }
    var k = key
    // (A chain longer than any hierarchy a run makes is a cycle.)
    for _ in 0..<64 {
      if k == root { return true }
      guard let p = parent(of: k) else { return false }
      k = p
    }
    return false
  }

  /// The zone record `key` is in (0: the app's zone).
  package func zone(of key: RecordKey) -> Int32 {
    Int(key) < recordZones.count ? recordZones[Int(key)] : 0
  }

  /// The zone `share` is in: the one a zone-wide share shares, or its root's.
  package func zone(of share: Share) -> Int32 {
    share.root.map { zone(of: $0) } ?? share.zone
  }

  /// The record `key`'s `parent` reference: as its owner's server has it, or, for a record not
  /// uploaded yet, as the first device holding a copy has it (nil: none).
  package func parent(of key: RecordKey) -> RecordKey? {
    let owner = account(ofRecord: key)
    let copy: RecordState? =
      owner >= 0 && owner < servers.count && servers[owner].records[key] != nil
      ? servers[owner].records[key] : devices.lazy.compactMap { $0.store[key] }.first
    guard let r = copy, !r.isDeleted, let f = context.rules.parentField[Int(r.type)], case .ref(let p) = r.fields[Int(f)].value, p != key
    else { return nil }
    return p
  }

  /// Whether device `d`'s account may see record `key` now: its own, or shared with it (a
  /// signed-out device may see nothing).
  package func mayShow(device d: Int, _ key: RecordKey) -> Bool {
    guard let a = deviceAccount(d) else { return false }
    return permission(of: a, on: key) != nil
  }

  /// A record made on device `d` that refers to a record the device has from its shared
  /// database is made in that share, in its owner's zone (CloudKit references stay within a
  /// zone, and a participant's child of a shared record is saved in the shared zone): it
  /// belongs to the owner. Called once per record, at its first create.
  mutating func madeInShare(_ intent: Intent, key k: Int, device d: Int32) {
    let account = deviceAccount(Int(d)) ?? -1
    creatorAccounts._grow(toHold: k, with: -1)
    creatorAccounts[k] = account
    guard account >= 0, case .create(_, let values) = intent.kind else { return }
    // (As the device sees it: a parent that came from its shared database.)
    guard devices[Int(d)].sharedKeys.contains(RecordKey(k)) else { return }
    for v in values {
      guard case .ref(let parent) = v.value else { continue }
      let owner = Int32(self.account(ofRecord: parent))
      if owner != account {
        recordAccounts[k] = owner
        // (In the shared zone: the one its parent is in.)
        if zone(of: parent) != 0 {
          recordZones._grow(toHold: k, with: 0)
          recordZones[k] = zone(of: parent)
        }
        return
      }
    }
  }

  /// The database a write from a device signed into `account` goes to: its record's owner's —
  /// but for a record the device saves as new (no change tag) that was made under another
  /// account and carried over (`account=merge`), which goes to the device's own.
  func database(of w: RecordWrite, from account: Int32) -> Int32 {
    let owner = Int32(self.account(ofRecord: w.record.key))
    guard owner != account, w.record.changeTag == 0, !w.isDelete else { return owner }
    let k = Int(w.record.key)
    let creator = k < creatorAccounts.count ? creatorAccounts[k] : -1
    return creator == account ? owner : account
  }

  /// Carries out a share action made on device `d`.
  mutating func performShare(_ action: ShareAction, device d: Int32) {
    let s = Int(action.share)
    guard s < sharing.shares.count, let me = deviceAccount(Int(d)), network.isOnline(NodeID(index: Int(d))), network.isUp(serverNode) else {
      trace.record(WorldTrace.lifecycle, at: now, node: d, 14, action.code, -1)
      note(.share(d, action, done: false))
      return
    }
    var share = sharing.shares[s]
    let owner = share.owner
    var done = true
    // Who gains and who loses access, to log their records in their shared databases.
    let before = share.active ? share.participants.filter(\.accepted).map(\.account) : []
    var ended: AccessEnd?
    var staleRoot: (known: Int64, server: Int64)?
    switch action {
    case .share:
      if share.active || (owner >= 0 && owner != me) {
        done = false
      } else if let root = share.root, !mayShareRoot(root, share: action.share, device: d, account: me, stale: &staleRoot) {
        done = false
      } else {
        share.owner = me
        share.active = true
        // Stopped and shared again: a new share, with no participants.
        share.participants = []
      }
    case .invite(_, let account, let permission):
      if !share.active || owner != me || account == me {
        done = false
      } else if let i = share.participants.firstIndex(where: { $0.account == account }) {
        share.participants[i].permission = permission
      } else {
        share.participants.append(.init(account: account, permission: permission, accepted: false))
      }
    case .accept:
      if let i = share.participants.firstIndex(where: { $0.account == me }), share.active {
        share.participants[i].accepted = true
      } else {
        done = false
      }
    case .leave:
      if let i = share.participants.firstIndex(where: { $0.account == me }), share.active {
        share.participants.remove(at: i)
        ended = .left
      } else {
        done = false
      }
    case .unshare:
      if share.active, owner == me {
        share.active = false
        ended = .unshared
      } else {
        done = false
      }
      // The user gives up a share the server kept refusing.
      let mine = sharing.refused.filter { $0.share == action.share && deviceAccount(Int($0.device)) == me }
      if !mine.isEmpty { sharing.refused.removeAll { mine.contains($0) } }
    case .permission(_, let account, let permission):
      if share.active, owner == me, let i = share.participants.firstIndex(where: { $0.account == account }) {
        share.participants[i].permission = permission
      } else {
        done = false
      }
    case .remove(_, let account):
      if share.active, owner == me, let i = share.participants.firstIndex(where: { $0.account == account }) {
        share.participants.remove(at: i)
        ended = .removed
      } else {
        done = false
      }
    }
    trace.record(WorldTrace.lifecycle, at: now, node: d, 14, action.code, done ? 1 : 0)
    if let staleRoot, let root = share.root {
      note(.shareRefused(d, share: action.share, root: root, known: staleRoot.known, server: staleRoot.server))
    } else {
      note(.share(d, action, done: done))
    }
    guard done else { return }
    let oldPermissions = before.map { sharing.permission(of: $0, onRecordsOf: share.owner) }
    sharing.shares[s] = share
    let after = share.active ? share.participants.filter(\.accepted).map(\.account) : []
    accessChanged(share: Int32(s), owner: share.owner, before: before, oldPermissions: oldPermissions, after: after, ended: ended)
  }

  /// Whether device `d` (signed into `account`) can save a hierarchy share of `root`: the root
  /// is its account's and on the server, the device has saved or fetched it (one a user's app
  /// drives: shows it), and the change tag it saves the root with is the
  /// server's (under `share-root=fetch-first` the engine fetched it just before; under
  /// `as-known` it is the tag of the copy it last fetched or saved). A refusal for a changed
  /// tag is kept, and the device tries again once it knows another tag
  /// (``retryRefusedShares(device:)``).
  mutating func mayShareRoot(
    _ root: RecordKey, share s: Int32, device d: Int32, account: Int32, stale staleRoot: inout (known: Int64, server: Int64)?
  ) -> Bool {
    guard self.account(ofRecord: root) == Int(account), let current = servers[Int(account)].records[root], !current.isDeleted,
      let mine = devices[Int(d)].store[root], mine.changeTag != 0 || drivenByAnApp(Int(d))
    else {
      // (Nothing to try again: the root is gone, or not this account's.)
      sharing.refused.removeAll { $0.share == s && $0.device == d }
      return false
    }
    let known = devices[Int(d)].knownTag(root)
    let stale = config.policy.settings.shareRoot == .asKnown && drivers.isEmpty && known != current.changeTag
    if let i = sharing.refused.firstIndex(where: { $0.share == s && $0.device == d }) {
      if stale {
        sharing.refused[i].attempts += 1
        sharing.refused[i].known = known
      } else {
        sharing.refused.remove(at: i)
      }
    } else if stale {
      sharing.refused.append(.init(share: s, device: d, known: known, since: now, attempts: 1))
    }
    if stale { staleRoot = (known, current.changeTag) }
    return !stale
  }

  /// Whether device `d` is driven by a user's app: the world's view of it holds what the app
  /// shows, without change tags (the app keeps them), so a root it shows is one it can share
  /// once the server has it.
  func drivenByAnApp(_ d: Int) -> Bool { d < drivers.count && drivers[d] != nil }

  /// Once device `d` knows another change tag for the root of a hierarchy share the server
  /// refused as changed (it fetched or saved the root since), it tries again with it.
  mutating func retryRefusedShares(device d: Int32) {
    for r in sharing.refused where r.device == d {
      guard let root = sharing.shares[Int(r.share)].root, devices[Int(d)].knownTag(root) != r.known else { continue }
      performShare(.share(r.share), device: d)
    }
  }

  /// Logs the owner's records in the shared database of every account whose access changed,
  /// notes the change, and notifies that account's devices.
  mutating func accessChanged(share s: Int32, owner: Int32, before: [Int32], oldPermissions: [SharePermission?], after: [Int32], ended: AccessEnd?) {
    var touched: [Int32] = []
    for (i, a) in before.enumerated() {
      let now = sharing.permission(of: a, onRecordsOf: owner)
      if now != oldPermissions[i] || !after.contains(a) {
        sharing.history.append(
          AccessChange(time: self.now, share: s, account: a, permission: after.contains(a) ? now : nil, ended: after.contains(a) ? nil : ended))
        if (now == nil) != (oldPermissions[i] == nil) { touched.append(a) }
      }
    }
    for a in after where !before.contains(a) {
      sharing.history.append(AccessChange(time: now, share: s, account: a, permission: sharing.permission(of: a, onRecordsOf: owner), ended: nil))
      touched.append(a)
    }
    guard !touched.isEmpty else { return }
    // Every record of the owner's zone: those on its server, and those made in the share on a
    // participant's device and not uploaded yet (a zone that leaves a shared database takes
    // them too).
    var keys: [RecordKey] = []
    for k in recordAccounts.indices where recordAccounts[k] == owner { keys.append(RecordKey(k)) }
    for a in touched {
      for k in keys { sharing.append(k, for: a) }
      notifyDevices(of: a)
    }
  }

  /// The owner's zone was deleted: its shares go with it.
  mutating func sharesGone(owner: Int32) {
    for s in sharing.shares.indices where sharing.shares[s].owner == owner && sharing.shares[s].active {
      let before = sharing.shares[s].participants.filter(\.accepted).map(\.account)
      let old = before.map { sharing.permission(of: $0, onRecordsOf: owner) }
      sharing.shares[s].active = false
      sharing.shares[s].participants = []
      accessChanged(share: Int32(s), owner: owner, before: before, oldPermissions: old, after: [], ended: .zoneDeleted)
    }
  }

  /// Logs records of `owner` that changed on its server in the shared databases of the accounts
  /// that may see them, and notifies their devices.
  mutating func sharedRecordsChanged(_ keys: [RecordKey], owner: Int32) {
    let readers = sharing.readers(of: owner)
    guard !readers.isEmpty, !keys.isEmpty else { return }
    for a in readers {
      for k in keys { sharing.append(k, for: a) }
      notifyDevices(of: a)
    }
  }

  /// Answers a fetch of account `a`'s shared database from `token` (nil: from the start): each
  /// record logged since, once — its owner's copy when `a` may see it now, else its key among
  /// those whose access ended.
  func sharedFetch(account a: Int32, token: Int64?) -> FetchReply {
    let log = sharing.logs[Int(a)]
    let from = token ?? 0
    var start = log.count
    while start > 0, log[start - 1].position > from { start -= 1 }
    var records: [RecordState] = []
    var revoked: [RecordKey] = []
    var readOnly: [RecordKey] = []
    var gone: [RecordKey] = []
    var seen = KeyBits()
    var last = from
    let page = servers[0].pageSize
    var i = start
    while i < log.count {
      let (position, key) = log[i]
      i += 1
      last = position
      if seen.contains(key) { continue }
      seen.insert(key)
      let may = permission(of: a, on: key)
      if may == nil {
        revoked.append(key)
      } else if let copy = serverRecord(key) {
        records.append(copy)
        if may == .readOnly { readOnly.append(key) }
      } else {
        // Not on the owner's server: gone with a zone deletion (or not uploaded yet, which the
        // device tells apart: its copy was never saved).
        gone.append(key)
      }
      if records.count + revoked.count + gone.count >= page { break }
    }
    return .shared(records: records, revoked: revoked, readOnly: readOnly, gone: gone, newToken: last, moreComing: i < log.count)
  }
}
