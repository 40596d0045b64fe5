import Replica
@_spi(Kernel) import Simulator

/// A run's events as JSON Lines (`sim-cli run --trace FILE.jsonl`): one object per event, keys
/// sorted, devices, records, fields and intents named as the scenario names them, outcomes in
/// words. Every object has `t` (nanoseconds), `time` and `event`:
///
///     {"action":"append \" +1\" to n1.body","device":"iPad","event":"intent","intent":"i2","record":"n1","t":3000000000,"time":"3.000s"}
///     {"event":"send","from":"iPad","kind":"push","message":12,"request":3,…,"to":"server","writes":[{"changed":["body"],"fields":{"body":"i2","title":"i1"},"record":"n1"}]}
///     {"at":"server","event":"arrive","message":12,"outcome":"delivered",…}
///     {"event":"decide","fields":{…},"message":12,"outcome":"saved","record":"n1","tag":3,…}
///
/// The run must have kept its events (`ScenarioRunner.run(…, keepEvents: true)`).
public enum TraceExport {
  /// The run's events as JSON Lines, one object per line, each ending in a newline; empty unless
  /// the run kept its events.
  public static func jsonLines(_ result: ScenarioRunner.Result) -> String {
    let words = Vocabulary(world: result.world, recordNames: result.recordNames)
    var out = ""
    for e in result.world.events {
      var o = object(e.what, world: result.world, words: words)
      o["t"] = .int(e.time.nanoseconds)
      o["time"] = .string(e.time.description)
      JSONValue.object(o).write(to: &out)
      out += "\n"
    }
    return out
  }

  static func object(_ what: WorldEvent.What, world: SyncWorld, words: Vocabulary) -> [String: JSONValue] {
    switch what {
    case .intent(let id):
      let i = world.log[id]
      var o: [String: JSONValue] = [
        "event": "intent", "intent": .string(Vocabulary.intent(id)), "device": .string(words.device(i.device)),
        "record": .string(words.record(i.record)), "action": .string(words.what(i)),
      ]
      if let why = i.ignored { o["ignored"] = .string(why) }
      return o
    case .sent(let seq, let from, let to, let message):
      var o: [String: JSONValue] = [
        "event": "send", "message": .int(Int64(seq)), "kind": .string(message.kind.name),
        "from": .string(words.node(from)), "to": .string(words.node(to)),
      ]
      payload(message, into: &o, words: words)
      return o
    case .arrived(let seq, let at, let arrival, let duplicate):
      var o: [String: JSONValue] = ["event": "arrive", "message": .int(Int64(seq)), "at": .string(words.node(at))]
      switch arrival {
      case .delivered: o["outcome"] = "delivered"
      case .refused: o["outcome"] = "refused"
      case .cutOff: o["outcome"] = "cut-off"
      case .droppedAtSend(let reason):
        o["outcome"] = "dropped"
        o["reason"] = .string(reason.description)
      }
      if duplicate { o["duplicate"] = .bool(true) }
      return o
    case .decided(let seq, let write, let result):
      var o: [String: JSONValue] = [
        "event": "decide", "message": .int(Int64(seq)), "record": .string(words.record(write.record.key)),
        "outcome": .string(result.outcome.rawValue),
      ]
      switch result {
      case .saved(let r), .conflict(let r), .refusedDeleted(let r):
        o["tag"] = .int(r.changeTag)
        o["fields"] = fields(r, words: words)
      case .rejected(let type):
        o["type"] = .string(type)
      case .failed(let error, let retryAfter):
        o["error"] = .string(error.rawValue)
        if let retryAfter { o["retryAfter"] = .string(retryAfter.description) }
      case .deleted:
        break
      }
      return o
    case .device(let d, let change):
      var o: [String: JSONValue] = ["device": .string(words.device(d))]
      switch change {
      case .killed: o["event"] = "kill"
      case .background(let budget):
        o["event"] = "background"
        o["budget"] = .string(budget.description)
      case .clockJumped(let by):
        o["event"] = "clock-jump"
        o["by"] = .string(by.description)
      case .online: o["event"] = "online"
      case .offline: o["event"] = "offline"
      case .account(let a):
        o["event"] = a == nil ? "sign-out" : "sign-in"
        if let a { o["account"] = .string(words.account(a)) }
      case .upgraded(let version):
        o["event"] = "upgrade"
        o["version"] = .int(Int64(version))
      case .file(let key, let field, let changed, let name):
        o["event"] = changed ? "change-file" : "delete-file"
        o["record"] = .string(words.record(key))
        o["field"] = .int(Int64(field))
        o["file"] = name.map { .string($0) } ?? .null
      case .stagingPurged(let n):
        o["event"] = "purge-staging"
        o["files"] = .int(Int64(n))
      }
      return o
    case .server(let up):
      return ["event": .string(up ? "server-up" : "server-down")]
    case .zoneDeleted(let d, let reason):
      var o: [String: JSONValue] = ["event": "zone-deleted", "reason": .string(reason.rawValue)]
      if let d { o["device"] = .string(words.device(d)) }
      return o
    case .storageFreed(let bytes):
      return ["event": "storage-freed", "bytes": .int(bytes)]
    case .rejecting(let rule):
      var o: [String: JSONValue] = [
        "event": "reject", "records": .array(rule.keys.map { .string(words.record($0)) }), "error": .string(rule.error.rawValue),
        "until": .string((rule.until - VirtualTime.zero).description),
      ]
      if let retryAfter = rule.retryAfter { o["retryAfter"] = .string(retryAfter.description) }
      return o
    case .fact(let d, let fact):
      var o: [String: JSONValue] = ["event": "fact", "device": .string(words.device(d))]
      switch fact {
      case .outboxLost(let keys):
        o["fact"] = "outbox-lost"
        o["records"] = .array(keys.map { .string(words.record($0)) })
      case .batchAbandoned(let keys, let cause):
        o["fact"] = "batch-abandoned"
        o["records"] = .array(keys.map { .string(words.record($0)) })
        o["cause"] = .string(cause)
      case .rejected(let key, let type):
        o["fact"] = "rejected"
        o["record"] = .string(words.record(key))
        o["type"] = .string(type)
      case .reappeared(let key, let deletes):
        o["fact"] = "reappeared"
        o["record"] = .string(words.record(key))
        o["afterDeletes"] = .array(deletes.map { .string(Vocabulary.intent($0)) })
      case .fetchDropped(let count, let cause):
        o["fact"] = "fetch-dropped"
        o["records"] = .int(Int64(count))
        o["cause"] = .string(cause)
      case .gaveUp(let keys, let error, let told):
        o["fact"] = "gave-up"
        o["records"] = .array(keys.map { .string(words.record($0)) })
        o["error"] = .string(error.rawValue)
        o["told"] = .bool(told)
      case .setAside(let keys, let account):
        o["fact"] = "set-aside"
        o["records"] = .array(keys.map { .string(words.record($0)) })
        o["account"] = .string(words.account(account))
      case .orphanDropped(let key, let parent):
        o["fact"] = "orphan-dropped"
        o["record"] = .string(words.record(key))
        o["parent"] = .string(words.record(parent))
      case .erasedUnknownFields(let key, let fields, let version), .droppedUnknownFields(let key, let fields, let version):
        if case .erasedUnknownFields = fact { o["fact"] = "erased-unknown-fields" } else { o["fact"] = "dropped-unknown-fields" }
        o["record"] = .string(words.record(key))
        o["fields"] = .array(fields.map { .string(words.field(key, Int($0))) })
        o["version"] = .int(Int64(version))
      case .wipedOnAccountChange(let keys):
        o["fact"] = "wiped-on-account-change"
        o["records"] = .array(keys.map { .string(words.record($0)) })
      case .zoneGone(let reason, let wiped, let reuploaded):
        o["fact"] = "zone-gone"
        o["reason"] = .string(reason.rawValue)
        o["wiped"] = .array(wiped.map { .string(words.record($0)) })
        o["reuploaded"] = .array(reuploaded.map { .string(words.record($0)) })
      case .stalled(let keys, let error):
        o["fact"] = "stalled"
        o["records"] = .array(keys.map { .string(words.record($0)) })
        if let error { o["error"] = .string(error.rawValue) }
      case .permissionRefused(let keys, let reverted):
        o["fact"] = "permission-refused"
        o["records"] = .array(keys.map { .string(words.record($0)) })
        o["reverted"] = .bool(reverted)
      case .accessEnded(let removed, let kept):
        o["fact"] = "access-ended"
        o["removed"] = .array(removed.map { .string(words.record($0)) })
        o["kept"] = .array(kept.map { .string(words.record($0)) })
      case .appDropped(let keys, let cause):
        o["fact"] = "app-dropped"
        o["records"] = .array(keys.map { .string(words.record($0)) })
        switch cause {
        case .notPersistedBeforeKill(let killed, let updated):
          o["cause"] = .string("not persisted before the kill at \(killed)")
          if !updated.isEmpty { o["stateUpdated"] = .array(updated.map { .string(words.record($0)) }) }
        case .clearedInFlight: o["cause"] = "cleared in flight"
        case .afterError(let code): o["cause"] = .string("after \(code)")
        case .removed: o["cause"] = "removed"
        }
      }
      return o
    case .share(let d, let action, let done):
      var o: [String: JSONValue] = [
        "event": "share", "device": .string(words.device(d)), "share": .string(words.share(action.share)),
        "action": .string(words.shareAction(action)), "done": .bool(done),
      ]
      switch action {
      case .invite(_, let a, let p), .permission(_, let a, let p):
        o["account"] = .string(words.account(a))
        o["permission"] = .string(p.rawValue)
      case .remove(_, let a): o["account"] = .string(words.account(a))
      default: break
      }
      return o
    case .shareRefused(let d, let share, let root, let known, let server):
      return [
        "event": "share-refused", "device": .string(words.device(d)), "share": .string(words.share(share)), "root": .string(words.record(root)),
        "error": "serverRecordChanged", "knownTag": .int(known), "serverTag": .int(server),
      ]
    case .settleStarted:
      return ["event": "settle"]
    case .settled(let rounds):
      return ["event": "settled", "rounds": .int(Int64(rounds))]
    case .finalState(let node, let digest, let records):
      let hex = String(digest, radix: 16)
      return [
        "event": "final-state", "node": .string(words.node(node)),
        "digest": .string(String(repeating: "0", count: 16 - hex.count) + hex), "records": .int(Int64(records)),
      ]
    }
  }

  /// What a message carries, in named fields.
  static func payload(_ message: Message, into o: inout [String: JSONValue], words: Vocabulary) {
    switch message {
    case .push(let id, let writes, _):
      o["request"] = .uint(id)
      o["writes"] = .array(
        writes.map { w in
          var x: [String: JSONValue] = ["record": .string(words.record(w.record.key))]
          if w.isDelete {
            x["delete"] = .string(Vocabulary.intent(w.record.deletedBy))
          } else {
            x["fields"] = fields(w.record, words: words)
            x["changed"] = .array(
              w.record.fields.indices.filter { w.changed.contains(field: $0) }.map { .string(words.field(w.record.key, $0)) })
          }
          return .object(x)
        })
    case .pushReply(let id, let results):
      o["request"] = .uint(id)
      o["results"] = .array(
        results.map { r in
          var x: [String: JSONValue] = ["outcome": .string(r.outcome.rawValue)]
          switch r {
          case .saved(let s), .conflict(let s), .refusedDeleted(let s):
            x["record"] = .string(words.record(s.key))
            x["tag"] = .int(s.changeTag)
          case .rejected(let type): x["type"] = .string(type)
          case .failed(let error, let retryAfter):
            x["error"] = .string(error.rawValue)
            if let retryAfter { x["retryAfter"] = .string(retryAfter.description) }
          case .deleted: break
          }
          return .object(x)
        })
    case .fetch(let id, let token, _):
      o["request"] = .uint(id)
      o["since"] = token.map { .int($0) } ?? .null
    case .fetchShared(let id, let token):
      o["request"] = .uint(id)
      o["database"] = "shared"
      o["since"] = token.map { .int($0) } ?? .null
    case .fetchReply(let id, .shared(let records, let revoked, let readOnly, let gone, let token, let more)):
      o["request"] = .uint(id)
      o["database"] = "shared"
      o["next"] = .int(token)
      o["more"] = .bool(more)
      o["revoked"] = .array(revoked.map { .string(words.record($0)) })
      if !readOnly.isEmpty { o["readOnly"] = .array(readOnly.map { .string(words.record($0)) }) }
      if !gone.isEmpty { o["gone"] = .array(gone.map { .string(words.record($0)) }) }
      o["records"] = .array(
        records.map { r in
          var x: [String: JSONValue] = ["record": .string(words.record(r.key)), "tag": .int(r.changeTag)]
          if r.isDeleted { x["deleted"] = .string(Vocabulary.intent(r.deletedBy)) } else { x["fields"] = fields(r, words: words) }
          return .object(x)
        })
    case .fetchReply(let id, .tokenExpired):
      o["request"] = .uint(id)
      o["tokenExpired"] = .bool(true)
    case .fetchReply(let id, .zoneDeleted(let reason, let epoch)):
      o["request"] = .uint(id)
      o["zoneDeleted"] = .string(reason.rawValue)
      o["epoch"] = .int(Int64(epoch))
    case .fetchReply(let id, .failed(let error, let retryAfter)):
      o["request"] = .uint(id)
      o["error"] = .string(error.rawValue)
      if let retryAfter { o["retryAfter"] = .string(retryAfter.description) }
    case .fetchReply(let id, .changes(let records, let token, let more)):
      o["request"] = .uint(id)
      o["next"] = .int(token)
      o["more"] = .bool(more)
      o["records"] = .array(
        records.map { r in
          var x: [String: JSONValue] = ["record": .string(words.record(r.key)), "tag": .int(r.changeTag)]
          if r.isDeleted { x["deleted"] = .string(Vocabulary.intent(r.deletedBy)) } else { x["fields"] = fields(r, words: words) }
          return .object(x)
        })
    case .notify:
      break
    case .zones(let id, let changes, _):
      o["request"] = .uint(id)
      o["zones"] = .array(changes.map { .object(["zone": .int(Int64($0.zone)), "delete": .bool($0.isDelete)]) })
    case .zonesReply(let id, let results):
      o["request"] = .uint(id)
      o["results"] = .array(
        results.map { r in
          switch r {
          case .done: return .object(["outcome": .string("done")])
          case .failed(let error, let retryAfter):
            var x: [String: JSONValue] = ["outcome": .string("failed"), "error": .string(error.rawValue)]
            if let retryAfter { x["retryAfter"] = .string(retryAfter.description) }
            return .object(x)
          }
        })
    }
  }

  /// `{"body":"i2","title":"default"}`: each field's writer.
  static func fields(_ r: RecordState, words: Vocabulary) -> JSONValue {
    var x: [String: JSONValue] = [:]
    for (i, f) in r.fields.enumerated() { x[words.field(r.key, i)] = .string(Vocabulary.writer(f.writer)) }
    return .object(x)
  }
}
