import Replica
@_spi(Kernel) import Simulator

/// Access (`oracle.md`): who may see a share's records, judged on its own.
extension Oracle {
  /// The live records of other accounts shared with `account` now, from their owners' servers.
  func sharedWith(_ account: Int32) -> [RecordState] {
    var out: [RecordState] = []
    for owner in world.servers.indices where Int32(owner) != account {
      guard world.sharing.permission(of: account, onRecordsOf: Int32(owner)) != nil else { continue }
      // (A hierarchy share covers only its root and what is below it.)
      for r in world.servers[owner].liveRecords where world.account(ofRecord: r.key) == owner && world.permission(of: account, on: r.key) != nil {
        out.append(r)
      }
    }
    return out
  }

  /// `access-leak`: after settle, a signed-in device shows records of another account that its
  /// account may not see. One anomaly per device and owner (`oracle.md` counts per device and
  /// share; with zone-wide shares an owner's zone is one share at a time), naming the account,
  /// the share and when access ended.
  mutating func judgeAccess() {
    defer { judgeForeignSaves() }
    guard world.hasSharing else { return }
    for d in world.devices.indices {
      guard let account = world.deviceAccount(d) else { continue }
      // (One per owner: a zone-wide share covers the whole zone, so the share named is the
      // last through which the account saw it.)
      var groups: [(share: Int32?, owner: Int32, keys: [RecordKey])] = []
      for r in world.visibleRecords(device: d) where !world.mayShow(device: d, r.key) {
        let owner = Int32(world.account(ofRecord: r.key))
        let share = lastShare(of: account, owner: owner)
        if let g = groups.firstIndex(where: { $0.owner == owner }) {
          groups[g].keys.append(r.key)
        } else {
          groups.append((share, owner, [r.key]))
        }
      }
      for g in groups {
        let config = world.deviceConfig(d)
        let records = g.keys.map(name).joined(separator: ", ")
        let whose = "\(words.account(g.owner))'s"
        var ended: VirtualTime?
        let what: String
        if let s = g.share, let change = world.sharing.history.last(where: { $0.share == s && $0.account == account && $0.permission == nil }) {
          ended = change.time
          let how: String =
            switch change.ended {
            case .removed?: "\(words.account(g.owner)) removed \(words.account(account)) from \(words.share(s))"
            case .left?: "\(words.account(account)) left \(words.share(s))"
            case .unshared?: "\(words.account(g.owner)) stopped sharing \(words.share(s))"
            case .zoneDeleted?: "\(words.account(g.owner))'s zone, and \(words.share(s)) with it, was deleted"
            case nil: "access to \(words.share(s)) ended"
            }
          what = "of \(whose) share \(words.share(s)), which \(words.account(account)) no longer has access to: \(how) at \(change.time)"
        } else {
          what = "of \(whose), which \(words.account(account)) never had access to"
        }
        anomalies.append(
          Anomaly(
            kind: .accessLeak, record: recordRef(g.keys[0]), devices: [deviceRef(config.index)], at: ended,
            explanation:
              "after settle \(config.name), signed into \(words.account(account)), shows \(records) \(what)\(leakCause(device: Int32(d), g.keys))."
          ))
      }
    }
  }

  /// The share through which `account` last had access to `owner`'s records (nil: none).
  func lastShare(of account: Int32, owner: Int32) -> Int32? {
    world.sharing.history.last { $0.account == account && world.sharing.shares[Int($0.share)].owner == owner }?.share
  }

  /// Why the device kept the copies: `; the engine kept its copies when access ended (access-ended=keep)`.
  func leakCause(device d: Int32, _ keys: [RecordKey]) -> String {
    for e in world.facts.events.reversed() where e.device == d {
      if case .accessEnded(_, let kept) = e.fact, kept.contains(where: keys.contains) {
        return
          "; \(deviceName(d)) kept showing its copies when it learned of it at \(e.time) (\(judgesAnApp ? "the app's code" : "access-ended=keep"))"
      }
    }
    if let changed = world.accountChangedAt[Int(d)] {
      return
        "; the device's iCloud account changed at \(changed) and it kept the previous account's copies (account=\(world.config.policy.settings.account))"
    }
    return ""
  }

  /// `access-leak`: after settle an account's database holds records made under another
  /// account, which it has no access to — uploaded by a device that kept them across an account
  /// change. One anomaly per database and owner, on its first record, naming the device that
  /// saved them there and when.
  mutating func judgeForeignSaves() {
    // (One account, one database: nothing can be another's. Most runs; no copy of the records.)
    guard world.servers.count > 1 else { return }
    for db in world.servers.indices {
      var groups: [(owner: Int, keys: [RecordKey])] = []
      for r in world.servers[db].liveRecords where world.account(ofRecord: r.key) != db {
        if world.hasSharing, world.permission(of: Int32(db), on: r.key) != nil { continue }
        let owner = world.account(ofRecord: r.key)
        if let g = groups.firstIndex(where: { $0.owner == owner }) { groups[g].keys.append(r.key) } else { groups.append((owner, [r.key])) }
      }
      for g in groups {
        // (A device signed into the database that shows them is an access-leak already, once
        // per device and owner, as `oracle.md` counts: the copy it uploaded is the same leak.)
        if world.hasSharing,
          world.devices.indices.contains(where: { d in
            world.deviceAccount(d) == Int32(db)
              && world.visibleRecords(device: d).contains { world.account(ofRecord: $0.key) == g.owner && !world.mayShow(device: d, $0.key) }
          })
        {
          continue
        }
        var first: (device: Int32, at: VirtualTime)?
        for case .savedIntoAnotherAccount(let key, let account, let device, let at) in world.facts.serverEvents
        where account == Int32(db) && g.keys.contains(key) {
          first = (device, at)
          break
        }
        let records = g.keys.map(name).joined(separator: ", ")
        let made = g.keys.count == 1 ? "made" : "all made"
        var how = ""
        if let first {
          how =
            ": \(deviceName(first.device)) saved \(g.keys.count == 1 ? "it" : "them") there at \(first.at), signed into \(words.account(Int32(db)))"
          if let changed = world.accountChangedAt[Int(first.device)], changed <= first.at {
            how +=
              " (its account changed at \(changed)), \(judgesAnApp ? "the app's code" : "the engine") having kept \(words.account(Int32(g.owner)))'s data"
          }
        }
        anomalies.append(
          Anomaly(
            kind: .accessLeak, record: recordRef(g.keys[0]), devices: first.map { [deviceRef($0.device)] } ?? [], at: first?.at,
            explanation:
              "after settle \(words.account(Int32(db)))'s database holds \(records), \(made) under \(words.account(Int32(g.owner)))'s account, which \(words.account(Int32(db))) has no access to\(how): data of one iCloud account uploaded into another's."
          ))
      }
    }
  }
}
