import Replica
@_spi(Kernel) import Simulator

extension Explainer {
  /// The mechanism behind one anomaly, as sentences.
  func why(_ a: Anomaly) -> [String] {
    if a.kind == .stalledSync { return whyStalled(a) }
    guard let key = a.record?.key else {
      return a.kind == .divergence ? ["The settle phase heals every fault and syncs in rounds; \(a.explanation)"] : []
    }
    switch a.kind {
    case .lostEdit, .staleOverwrite, .concurrentOverwrite:
      return whyOverwritten(a, key: key)
    case .resurrection:
      return whyResurrected(a, key: key)
    case .deleteUpdateConflict:
      return whyConflict(a, key: key)
    case .strandedRecord:
      return whyStranded(a, key: key)
    case .droppedEvent:
      return whyDropped(a, key: key)
    case .danglingReference where isApp:
      return [
        "A reference is a record name stored in the referring record; CloudKit does not follow it. When the record it names is deleted, the schema's delete rule (cascade or nullify) is the app's to carry out on every device that holds a referring record — on the deletes it makes and fetches, and on referring records it fetches after the delete — going by the latest copy it has (a child moved to another parent is not the deleted parent's any more)."
      ]
    case .danglingReference:
      return [
        "A reference is a record name stored in the referring record; CloudKit does not follow it (unless the server checks references, and then only at save time). When the record it names is deleted, the schema's delete rule (cascade or nullify) has to run on every device that holds a referring record — on the deletes it fetches, and on referring records it fetches after the delete — or the reference is left naming nothing. \(settings.references == .localOnly ? "references=local-only: the rules ran only on the device where the user deleted." : "") A cascade must also go by what the device knows once a fetched batch is applied: a child moved to another parent before the delete is not the deleted parent's any more\(settings.references == .eager ? " (references=eager ran the rules on the fetched deletes before the rest of the batch)" : "")."
      ]
    case .logicalDuplicate:
      return [
        "CloudKit has no unique constraints: two devices that each create the record before they sync save two records, and both survive. \(isApp ? "" : settings.unique == .ignore ? "unique=ignore: each create got a random record name (a UUID, as Core Data and SwiftData do)." : settings.unique == .dedupe ? "unique=dedupe: records got random names and the engine deletes a duplicate only when it fetches one, so a copy revived by a concurrent edit stays." : "") Deriving the record name from the key (a fixed name for a singleton) makes the second save a conflict on the same record, which the merge resolves (unique=key-name); de-duplicating after the fact has to pick the survivor deterministically on every device and move the loser's data over."
      ]
    case .accessLeak
    where history.world.facts.serverEvents.contains(where: { if case .savedIntoAnotherAccount(key, _, _, _) = $0 { true } else { false } }):
      return [
        "Each iCloud account has its own private database, and a change tag names a version of one record in one of them: a save carrying a tag from another account's database is refused with unknownItem, since this database never had the record. When the account on a device changes, CKSyncEngine resets its state; what the app kept of the previous account is that account's, to be set aside (or deleted), not sent to the new one — uploading it again without its change tag after unknownItem makes it a new record in the other account's iCloud."
      ]
    case .accessLeak:
      return [
        "A participant sees a share's records in its shared database only while it has access. When access ends — the owner removes the participant or stops sharing, the participant leaves, the owner's zone is deleted — the zone disappears from the participant's shared database, and the engine must delete its local copies of what was in it (they are not deletes: nothing is uploaded). \(!isApp && settings.accessEnded == .keep ? "access-ended=keep: the engine kept showing them." : "") A device whose iCloud account changes must not show the previous account's shared records either."
      ]
    case .missingAsset:
      return [
        "An asset (CKAsset) is a file stored beside its record. A device that saves one must keep the file until the save is confirmed; a device that fetches one finds the file in a staging area the system purges when it likes, and must copy it into its own files at once (Apple, CKAsset). The server record that comes with serverRecordChanged has no asset data (CKAsset.fileURL is nil): a merge that copies its assets saves nothing in their place. \(!isApp && settings.fetchedAssets == .keepStaging ? "fetched-assets=keep-staging: the engine kept the staging file." : "")\(!isApp && settings.assetMerge == .allFields ? "asset-merge=all-fields: the merge copied every field of the server's record." : "")"
      ]
    case .duplicateEvent, .divergence, .phantomValue, .stalledSync:
      return []
    }
  }

  /// Why an edit never reached the server, from the policy's axes.
  func neverSentWhy(_ loser: Intent) -> String {
    let lead = "i\(loser.id) never reached the server, so no merge rule decided against it: "
    if isApp { return lead + "the app no longer had a change of it pending, though it still showed the edit (the sentence above says why)." }
    if settings.retry == .never {
      return lead
        + "retry=never: the engine gives up on a change after any CloudKit error, and a transient one (zoneBusy, a rate limit, a full storage the user frees later) needed only a retry after its retry-after. The app showed the edit as synced."
    }
    if settings.account == .wipe {
      return lead
        + "account=wipe: on an account change the engine deletes local data with its pending changes, as Apple's sample does; account=keep sets them aside with their account and uploads them when it signs in again."
    }
    if settings.unit == .markFirst {
      return lead + "unit=mark-first: the outbox entry was cleared when its batch was sent, and the batch was cut off."
    }
    if settings.outbox == .memory { return lead + "outbox=memory: the pending change died with the app." }
    return lead + "its upload was still pending when settle ended (see stalled-sync)."
  }

  /// A device that never finished syncing: what settle heals and what it cannot.
  func whyStalled(_ a: Anomaly) -> [String] {
    var out = [
      "The settle phase heals every fault — the server up, the network clean, every device online and in the foreground, every `reject` line ended — and then waits for sync to finish; it cannot free the user's iCloud storage or lift the server's throttling, and it gives up after its bound. \(a.explanation)"
    ]
    if isApp { return out }
    switch settings.retryAfter {
    case .ignore:
      out.append(
        "retry-after=ignore: the engine retries on its own backoff (at most \(SimDuration.seconds(60))) instead of waiting as long as the server asked; a request that comes back early is refused again and the wait doubles, so it never gets through."
      )
    case .honour:
      break
    }
    if settings.split == .off {
      out.append("split=off: after limitExceeded the engine sends the same batch again, which fails the same way every time.")
    }
    return out
  }

  // MARK: A value overwritten

  func whyOverwritten(_ a: Anomaly, key: RecordKey) -> [String] {
    guard let (loser, winner) = a.pair(in: history), let fieldName = a.field?.name, let f = a.field?.index else { return [] }
    var out: [String] = []
    let r = names.record(key)
    let place = "\(r).\(fieldName)"
    // An edit that never reached the server lost to no merge rule: say what kept it back.
    if a.kind == .lostEdit, a.explanation.contains("never reached the server") {
      return [neverSentWhy(loser)]
    }
    let lPush = history.firstPush(carrying: loser.id, key: key)
    let decisive = history.decisiveStore(key: key, field: f, loser: loser.id)
    let unit = settings.granularity == .record ? "record" : "field"
    if isApp { return whyOverwrittenByAnApp(loser: loser, winner: winner, field: f, place: place, lPush: lPush, decisive: decisive) }

    // The policy's rule, and how it applied here.
    switch settings.winner {
    case .arrival:
      var s = "winner=arrival: the server keeps whichever save of the \(unit) arrives last, whatever happened first."
      if let d = decisive {
        s += " The save that decided was push #\(d.seq) from \(names.node(d.device)), which arrived at \(time(d.time))"
        if let l = lPush?.store, l.seq != d.seq { s += ", after i\(loser.id)'s push #\(l.seq) at \(time(l.time))" }
        s += "."
      }
      out.append(s)
    case .clock, .hlc:
      let byClock = settings.winner == .clock
      var s =
        byClock
        ? "winner=clock: the server keeps the \(unit) with the later device-clock stamp, and device clocks can be wrong."
        : "winner=hlc: the server keeps the \(unit) with the later hybrid-logical-clock stamp (a device clock that never runs behind what the device has seen)."
      let l = stamp(of: loser, field: f, key: key)
      let w = stamp(of: winner, field: f, key: key)
      s +=
        " i\(winner.id) is stamped \(w.text) on \(names.node(Int(winner.device)))\(clockNote(winner.device)); i\(loser.id) is stamped \(l.text) on \(names.node(Int(loser.device)))\(clockNote(loser.device))"
      let lv: (Int64, Int64)? = byClock ? l.clock.map { ($0, 0) } : l.hlc
      let wv: (Int64, Int64)? = byClock ? w.clock.map { ($0, 0) } : w.hlc
      if let lv, let wv, lv < wv {
        s += ", so i\(winner.id) counts as later"
        if loser.trueTime > winner.trueTime {
          s += " although i\(loser.id) was made \(TimeText.moment((loser.trueTime - winner.trueTime).nanoseconds)) after it in true time"
        }
      }
      out.append(s + ".")
    }
    if settings.granularity == .record {
      let keys = settings.save == .allKeys ? "every field of the device's copy" : "the fields the device changed"
      var s = "granularity=record (save=\(settings.save.rawValue)): a winning save takes \(keys), so"
      if winner.writtenFields.contains(Int32(f)) {
        s += " i\(winner.id)'s copy of \(place) replaced i\(loser.id)'s."
      } else {
        s += " \(names.node(Int(winner.device)))'s save for i\(winner.id) carried its old copy of \(place) along, made without i\(loser.id)."
      }
      out.append(s)
    }
    if settings.save == .ifUnchanged {
      out.append(
        "save=if-unchanged: a save based on an old change tag is answered 'conflict', and the device merges with the server's version before saving again (by the same winner rule)."
      )
    }
    if case .text = names.fieldKind(key, f), settings.text == .whole {
      out.append("text=whole: a text field is one value, so the winner's text replaces the other's; text=merge would have kept both edits.")
    }
    // Causality: what excuses (or does not excuse) the outcome.
    if loser.isConcurrent(with: winner) {
      out.append("i\(loser.id) and i\(winner.id) were concurrent, so neither device could have taken the other's edit into account.")
    } else if winner.happenedBefore(loser) {
      out.append("i\(loser.id) had already seen i\(winner.id), so the older value should not have won: the order the policy used was wrong.")
    }
    if let d = decisive {
      let sent = names.fields(d.write.record, only: f, stamps: true)
      let held = d.stored.map { names.fields($0, only: f, stamps: true) } ?? ""
      out.append(
        "Decisive step: at \(time(d.time)) the server handled push #\(d.seq) from \(names.node(d.device)), which sent \(sent), and kept \(held) (tag \(d.stored?.changeTag ?? 0))."
      )
    } else if lPush == nil {
      out.append("i\(loser.id) never left \(names.node(Int(loser.device))) in a push that reached the server.")
    }
    return out
  }

  /// For a user's app: no merge rule of a preset decided, the app's code did — the server only
  /// refuses a save whose change tag is not current; which value ends up in the record is how
  /// the app merged after `serverRecordChanged`, or applied a fetched record.
  func whyOverwrittenByAnApp(
    loser: Intent, winner: Intent, field f: Int, place: String, lPush: (message: RunHistory.Message, store: RunHistory.Store?)?,
    decisive: RunHistory.Store?
  ) -> [String] {
    var out = [
      "The server takes a save only when it carries the current change tag, and answers any other with serverRecordChanged and its own version: which value of \(place) ends up in the record is the app's code — how it merged after that error, and how it applied the records it fetched."
    ]
    if loser.isConcurrent(with: winner) {
      out.append("i\(loser.id) and i\(winner.id) were concurrent, so neither device could have taken the other's edit into account.")
    } else if winner.happenedBefore(loser) {
      out.append("i\(loser.id) had already seen i\(winner.id), so the older value should not have won: the app's code put it back.")
    }
    if let d = decisive {
      let sent = names.fields(d.write.record, only: f, stamps: false)
      let held = d.stored.map { names.fields($0, only: f, stamps: false) } ?? ""
      out.append(
        "Decisive step: at \(time(d.time)) the server handled push #\(d.seq) from \(names.node(d.device)), which sent \(sent), and kept \(held) (tag \(d.stored?.changeTag ?? 0))."
      )
    } else if lPush == nil {
      out.append("i\(loser.id) never left \(names.node(Int(loser.device))) in a push that reached the server.")
    }
    return out
  }

  /// A stamp as text and as numbers, from the first push that carried the intent's write.
  func stamp(of i: Intent, field f: Int, key: RecordKey) -> (text: String, clock: Int64?, hlc: (Int64, Int64)?) {
    if let s = history.firstPush(carrying: i.id, key: key)?.store {
      let fields = s.write.record.fields
      let sent = f < fields.count && fields[f].writer == i.id ? fields[f] : fields.first { $0.writer == i.id }
      if let sent {
        return (Vocabulary.stamp(sent.stamp), sent.stamp.clock, (sent.stamp.hlcWall, Int64(sent.stamp.hlcLogical)))
      }
    }
    return ("clock \(i.deviceTime)", i.deviceTime.nanoseconds, nil)
  }

  /// ` (clock +10m)` for a skewed or drifting device, else "".
  func clockNote(_ device: Int32) -> String {
    let c = history.world.config.clocks[Int(device)]
    return c.skew == .zero && c.driftPPM == 0 ? "" : " (its clock is \(skewText(c)))"
  }

  // MARK: A delete undone

  func whyResurrected(_ a: Anomaly, key: RecordKey) -> [String] {
    guard let d = a.intents.first.flatMap(history.intent), d.kind == .delete else { return [] }
    let r = names.record(key)
    var out: [String] = []
    if let (push, store) = history.firstPush(carrying: d.id, key: key), let store {
      let kept =
        isApp
        ? "the server keeps a tombstone for the retention window, as CloudKit does"
        : settings.delete == .hard
          ? "delete=hard: the server keeps no tombstone that could stop a later save from recreating the record"
          : "delete=tombstone: the server keeps a tombstone for the retention window (retention=\(settings.retention))"
      // (For an app, a delete the server failed left no tombstone: say only that it failed.)
      var deleted: Bool {
        if case .deleted = store.result { return true }
        return false
      }
      let tail = isApp && !deleted ? "" : "; \(kept)"
      out.append("i\(d.id)'s delete reached the server at \(time(store.time)) in push #\(push.seq), and the server \(storeWords(store))\(tail).")
    }
    if let back = history.revivingStore(key: key) {
      let writers = names.fields(back.write.record, only: nil, stamps: false)
      var s = "At \(time(back.time)) push #\(back.seq) from \(names.node(back.device)) saved \(r) again (\(writers)), which recreated it"
      if let retry = retriedPush(before: back) {
        s +=
          ". It was a retry: \(names.node(retry.from))'s push #\(retry.seq) with the same change had reached the server at \(retry.delivery.map { time($0.time) } ?? "?") but its reply \(replyFate(retry)), so \(names.node(retry.from)) could not know it had been saved, and sent it again after the delete"
      }
      out.append(s + ".")
    }
    if let purge = history.marks.first(where: {
      if case .purged(key, _) = $0.kind { return true }
      return false
    }) {
      out.append(
        "The tombstone of \(r) was purged at \(time(purge.time)), the first request after the retention window (\(settings.retention)); from then on a change token from before the purge cannot be served."
      )
    }
    for m in history.messages where m.tokenExpired {
      let who = names.node(m.to)
      guard a.devices.contains(where: { $0.name == who }) else { continue }
      out.append(
        "\(who)'s fetch was answered 'token expired' at \(time(m.sent)): it had to refetch everything, and a refetch does not list deletions of records it did not create."
      )
      out.append(
        isApp
          ? "After such a refetch the app learns of the deletions it is not told of only by noting which of its rows the refetch did not bring back; a row it keeps stays, though the record is deleted."
          : settings.refetch == .naive
            ? "refetch=naive: after the refetch \(who) kept the rows it already had, \(r) included — a zombie no later sync removes (refetch=diff deletes rows the server no longer returns)."
            : "refetch=diff: rows the refetch did not return are deleted locally, unless they still have changes pending.")
      break
    }
    for m in history.marks {
      if case .fact(.reappeared(key, _)) = m.kind {
        out.append("\(r) reappeared on \(names.node(m.node)) at \(time(m.time)) after that device had applied the delete.")
      }
    }
    return out
  }

  /// An earlier push from the same device that carried the same writes of the record, was saved,
  /// and whose reply never arrived.
  func retriedPush(before s: RunHistory.Store) -> RunHistory.Message? {
    guard let again = history.message(s.seq), let write = again.write(of: s.key) else { return nil }
    func writers(_ w: RecordWrite) -> [IntentID] { w.isDelete ? [] : w.record.fields.map(\.writer) }
    let same = writers(write)
    return history.messages.last { m in
      m.kind == .push && m.from == again.from && m.seq < again.seq && m.delivery != nil
        && m.write(of: s.key).map { writers($0) == same } == true
        && !(reply(to: m)?.ends.contains(where: \.delivered) ?? false)
    }
  }

  func reply(to push: RunHistory.Message) -> RunHistory.Message? {
    history.messages.first { $0.kind == .pushReply && $0.to == push.from && $0.request == push.request }
  }

  func replyFate(_ push: RunHistory.Message) -> String {
    guard let reply = reply(to: push) else { return "was never sent" }
    guard let end = reply.ends.first else { return "was still in flight" }
    return "was " + end.fate(from: names.node(reply.from), to: names.node(reply.to), at: time(end.time))
  }

  // MARK: Delete against update

  func whyConflict(_ a: Anomaly, key: RecordKey) -> [String] {
    let rule =
      isApp
      ? "Which side wins is the app's: the server refuses a save of a deleted record that carries a change tag (unknownItem), and the app decides whether to give way to the delete or upload the record again without its tag — which CloudKit takes as a new record."
      : settings.conflict == .deleteWins
        ? "conflict=delete-wins: once the tombstone is on the server, saves of the record are refused and the devices drop their copies."
        : "conflict=update-wins: a save the deleting device had not seen beats the delete and revives the record."
    var out = [rule]
    for s in history.stores(of: key) where s.outcome == .refused || s.outcome == .deleted {
      out.append("At \(time(s.time)) the server \(storeWords(s)) (push #\(s.seq) from \(names.node(s.device))).")
    }
    return out
  }

  // MARK: Never uploaded

  func whyStranded(_ a: Anomaly, key: RecordKey) -> [String] {
    var out: [String] = []
    let pushes = history.messages.filter { $0.kind == .push && $0.carries(key) }
    if pushes.isEmpty {
      out.append("No push carrying \(names.record(key)) was ever sent.")
    } else {
      for p in pushes {
        out.append(
          "push #\(p.seq) carrying \(names.record(key)) left at \(time(p.sent)): \(fates(p))"
            + (p.stores.first { $0.key == key }.map { "; the server \(storeWords($0))" } ?? "") + ".")
      }
    }
    switch isApp ? (.durable, .resumable) : (settings.outbox, settings.unit) {
    case (.memory, _):
      out.append("outbox=memory: pending uploads live in memory, so a kill before they are sent loses them for good.")
    case (_, .markFirst):
      out.append(
        "unit=mark-first: the outbox entries are cleared when the batch is sent, so a batch cut off in flight is never retried (unit=resumable clears them on the server's answer)."
      )
    default:
      break
    }
    if let finding = names.schema.safetyFindings().first(where: { f in
      names.types(key).map { f.blocks.contains(names.schema.types[Int($0)].name) } ?? false
    }) {
      out.append("Schema: \(finding.sentence)")
    }
    return out
  }

  // MARK: An event missing

  func whyDropped(_ a: Anomaly, key: RecordKey) -> [String] {
    var out: [String] = []
    let r = names.record(key)
    for device in a.devices {
      let d = device.name
      let node = Int(device.index)
      let replies = history.messages.filter { $0.kind == .fetchReply && $0.to == node && $0.carries(key) }
      if replies.isEmpty {
        out.append("No fetch reply carrying \(r) ever reached \(d).")
      }
      for m in replies {
        out.append("\(r) reached \(d) in fetch-reply #\(m.seq) (\(fates(m))), with next token \(m.token ?? 0).")
      }
      for mark in history.marks where mark.node == node {
        if case .fact(.fetchDropped(let n, let cause)) = mark.kind {
          out.append(
            "At \(time(mark.time)) \(d) dropped \(n) fetched record\(n == 1 ? "" : "s") before applying \(n == 1 ? "it" : "them") (\(cause)).")
          if let next = history.messages.first(where: { $0.kind == .fetch && $0.from == node && $0.sent >= mark.time }) {
            let since = next.fetchesEverything ? "everything" : "changes since token \(next.token ?? 0)"
            out.append("\(d)'s next fetch, #\(next.seq) at \(time(next.sent)), asked for \(since).")
          }
        }
      }
    }
    if isApp { return out }
    out.append(
      settings.token == .beforeApply
        ? "token=before-apply: the device saves the change token when the reply arrives, before applying the records; when applying is cut off, the next fetch starts after them and never returns them again."
        : "token=after-apply: the token is saved only once the records are applied, so an interrupted fetch is repeated.")
    return out
  }
}
