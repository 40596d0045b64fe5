import Replica
@_spi(Kernel) import Simulator

/// An independent, brute-force second oracle: re-judges a finished run from its raw
/// observations, intents and final states, sharing no judging code with the main oracle.
///
///     var config = WorldConfig(...)
///     config.recordObservations = true
///     var world = SyncWorld(config)
///     ... schedule, run ...
///     world.settle()
///     let verdicts = ReferenceOracle.judge(world)   // sorted, e.g. [lost-edit r2.f0]
///
/// Reads only `world.log.intents` (id, device, record, kind, ignored, and which delete a rule
/// or a de-duplication made), `world.facts.observations`, `world.facts.settled`, the cascades the
/// engine made (`world.facts.cascades`), the schema, and the devices' and server's final records.
package enum ReferenceOracle {
  /// Every anomaly of a settled run, sorted (``ReferenceVerdict/<(_:_:)``). A multiset: each
  /// lost intent is its own verdict, so one field can carry several identical verdicts.
  ///
  /// Preconditions: the world ran with `WorldConfig.recordObservations = true`.
  package static func judge(_ world: SyncWorld) -> [ReferenceVerdict] {
    var judge = Judge(world)
    return judge.run().sorted()
  }

  /// The causality, server arrival and reappearances rebuilt from the run's observations.
  package static func causality(of world: SyncWorld) -> ReferenceCausality {
    ReferenceCausality(world)
  }

  /// The rebuilt happened-before relation: `happenedBefore(in: world)(a, b)` is `a → b`.
  package static func happenedBefore(in world: SyncWorld) -> (IntentID, IntentID) -> Bool {
    let causality = ReferenceCausality(world)
    return { causality.happenedBefore($0, $1) }
  }
}

/// One judging pass (see the step numbers in the comments).
struct Judge {
  let world: SyncWorld
  let causality: ReferenceCausality
  let schema: Schema
  /// Effective intents per record, in id order (lookups only).
  let effective: [RecordKey: [Intent]]
  /// Records with at least one effective intent, in key order.
  let keys: [RecordKey]
  var out: [ReferenceVerdict] = []

  init(_ world: SyncWorld) {
    self.world = world
    causality = ReferenceCausality(world)
    schema = world.config.schema
    var effective: [RecordKey: [Intent]] = [:]
    for intent in world.log.intents where intent.ignored == nil && intent.keptInstead == nil && !causality.withdrawn.contains(intent.id) {
      effective[intent.record, default: []].append(intent)
    }
    self.effective = effective
    keys = effective.keys.sorted()
  }

  func hb(_ a: IntentID, _ b: IntentID) -> Bool { causality.happenedBefore(a, b) }
  func concurrent(_ a: IntentID, _ b: IntentID) -> Bool { causality.isConcurrent(a, b) }

  mutating func report(_ kind: String, _ record: RecordKey?, _ field: Int? = nil) {
    out.append(ReferenceVerdict(kind: kind, record: record, field: field))
  }

  func visibleOnAnyDevice(_ r: RecordKey) -> Bool {
    world.devices.contains { $0.visibleRecord(r) != nil }
  }

  func liveOnServer(_ r: RecordKey) -> Bool {
    if let copy = world.serverRecord(r) { return !copy.isDeleted }
    return false
  }

  static func isDelete(_ i: Intent) -> Bool {
    if case .delete = i.kind { return true }
    return false
  }

  static func isCreate(_ i: Intent) -> Bool {
    if case .create = i.kind { return true }
    return false
  }

  /// A delete every update of the record had happened before (of a record created again after
  /// a delete: every update of the delete's incarnation).
  func isQualifying(_ d: IntentID, on r: RecordKey) -> Bool {
    var intents = effective[r] ?? []
    guard intents.contains(where: { $0.id == d && Self.isDelete($0) }) else { return false }
    if world.context.isRecreated(r) { intents = incarnations(of: r).groups.first { g in g.contains { $0.id == d } } ?? intents }
    return intents.filter { !Self.isDelete($0) }.allSatisfy { hb($0.id, d) }
  }

  /// The incarnations of a record created again after a delete, by the rebuilt causality: its
  /// creates in order; the final one — the server's copy's, unless a create came after it
  /// knowing it, else the last create none came after; and per create, the intents made
  /// knowing it (knowing the final one, or else the last known).
  func incarnations(of r: RecordKey) -> (creates: [Intent], final: Int, groups: [[Intent]]) {
    let intents = effective[r] ?? []
    let creates = intents.filter(Self.isCreate)
    var last: [Int] = []
    for (k, c) in creates.enumerated() where !creates.contains(where: { hb(c.id, $0.id) }) { last.append(k) }
    var final = last.last ?? max(0, creates.count - 1)
    if let s = world.serverRecord(r), let k = last.first(where: { creates[$0].id == s.creator }) {
      final = k
    } else if let held = world.facts.serverIncarnations[r], let k = last.first(where: { creates[$0].id == held }) {
      final = k
    }
    var out = Array(repeating: [Intent](), count: max(1, creates.count))
    for i in intents {
      var k = 0
      var knowsFinal = false
      for (j, c) in creates.enumerated() where c.id == i.id || hb(c.id, i.id) {
        k = j
        if j == final { knowsFinal = true }
      }
      out[knowsFinal ? final : k].append(i)
    }
    return (creates, final, out)
  }

  mutating func run() -> [ReferenceVerdict] {
    var resurrected = Set<RecordKey>()
    var explained = Set<RecordKey>()
    for r in keys {
      judgeRecord(r, resurrected: &resurrected, explained: &explained)
    }
    // 6. Transient resurrection: a reappearance after an applied qualifying delete.
    for re in causality.reappearances where effective[re.record] != nil && !resurrected.contains(re.record) {
      if re.appliedDeletes.contains(where: { isQualifying($0, on: re.record) }) {
        report(ReferenceVerdict.resurrection, re.record)
        resurrected.insert(re.record)
        explained.insert(re.record)
      }
    }
    // 7. Liveness: a device with changes it never managed to send, or still waiting out an
    // error, after settle. Its differences from the server are that stall.
    var stalled = Set<Int32>()
    for device in world.devices where device.account != nil && (device.waitingOn != nil || device.outbox.entries.contains(where: { !$0.failed })) {
      report(ReferenceVerdict.stalledSync, device.outbox.entries.first { !$0.failed }?.key)
      stalled.insert(device.config.index)
    }
    // A hierarchy share the server still refuses after settle: work the device never got done.
    for r in world.sharing.refused where !stalled.contains(r.device) && world.devices[Int(r.device)].account != nil {
      report(ReferenceVerdict.stalledSync, world.sharing.shares[Int(r.share)].root)
      stalled.insert(r.device)
    }
    // 8. Access: a signed-in device showing another account's records that its account may not
    // read now; one verdict per device and owner, on the first such record.
    for device in world.devices where world.hasSharing {
      guard let account = device.account else { continue }
      var owners: [Int] = []
      for r in device.visibleRecords where world.account(ofRecord: r.key) != Int(account) && !mayRead(account, r.key) {
        let owner = world.account(ofRecord: r.key)
        if !owners.contains(owner) {
          owners.append(owner)
          report(ReferenceVerdict.accessLeak, r.key)
        }
      }
    }
    // 8a. Access: an account's database holding records made under another account that it
    // may not read; one verdict per database and owner, on the first such record.
    for db in world.servers.indices where world.servers.count > 1 {
      var owners: [Int] = []
      for r in world.servers[db].liveRecords where world.account(ofRecord: r.key) != db && !(world.hasSharing && mayRead(Int32(db), r.key)) {
        let owner = world.account(ofRecord: r.key)
        // (Counted once per device and owner: a device of the database showing that owner's
        // records it may not read has the verdict already.)
        let shownThere =
          world.hasSharing
          && world.devices.contains { d in
            d.account == Int32(db) && d.visibleRecords.contains { world.account(ofRecord: $0.key) == owner && !mayRead(Int32(db), $0.key) }
          }
        if !owners.contains(owner) && !shownThere {
          owners.append(owner)
          report(ReferenceVerdict.accessLeak, r.key)
        }
      }
    }
    // 8b. Assets: a device showing a record whose asset's file is not on it.
    judgeAssets()
    // 9. Divergence: against the account's own server and what is shared with it.
    if !world.facts.settled && stalled.isEmpty { report(ReferenceVerdict.divergence, nil) }
    for device in world.devices where !stalled.contains(device.config.index) {
      guard let account = device.account else { continue }
      var server = world.servers[Int(account)].liveRecords.filter {
        !explained.contains($0.key) && (!world.hasSharing || world.account(ofRecord: $0.key) == Int(account) || mayRead(account, $0.key))
      }
      for owner in world.servers.indices where owner != Int(account) {
        for r in world.servers[owner].liveRecords
        where world.account(ofRecord: r.key) == owner && mayRead(account, r.key) && !explained.contains(r.key) {
          server.append(r)
        }
      }
      server.sort { $0.key < $1.key }
      var mine = device.visibleRecords.filter {
        !explained.contains($0.key) && (!world.hasSharing || world.account(ofRecord: $0.key) == Int(account) || mayRead(account, $0.key))
      }
      if Int(device.appVersion) < world.config.schema.latestVersion {
        server = Self.visible(server, toVersion: Int(device.appVersion), schema: world.config.schema)
        mine = Self.visible(mine, toVersion: Int(device.appVersion), schema: world.config.schema)
      }
      if let (record, field) = Self.firstDifference(mine, server) {
        report(ReferenceVerdict.divergence, record, field)
      }
    }
    judgeSchemaRules()
    return out
  }

  /// Whether `account` may read record `r` of another account now, from the shares' final
  /// state: an active share of the record's owner that the account has accepted, of the zone
  /// the record is in, or of a hierarchy the record is in.
  func mayRead(_ account: Int32, _ r: RecordKey) -> Bool {
    let owner = Int32(world.account(ofRecord: r))
    return world.sharing.shares.contains { share in
      share.active && share.owner == owner && share.participants.contains { $0.account == account && $0.accepted }
        && (share.root.map { inHierarchy(r, root: $0) } ?? (share.zone == (Int(r) < world.recordZones.count ? world.recordZones[Int(r)] : 0)))
    }
  }

  /// Whether record `r` is `root` or below it: its `parent` field (the schema's field marked
  /// `parent`), followed on the owner's server, or on the first device with a copy for a record
  /// the server does not have, leads to `root`.
  func inHierarchy(_ r: RecordKey, root: RecordKey) -> Bool {
    var k = r
    var seen: Set<RecordKey> = []
    while k != root {
      guard seen.insert(k).inserted else { return false }
      let owner = world.account(ofRecord: k)
      let copy =
        owner >= 0 && owner < world.servers.count && world.servers[owner].records[k] != nil
        ? world.servers[owner].records[k] : world.devices.lazy.compactMap { $0.store[k] }.first
      guard let c = copy, !c.isDeleted,
        let f = world.config.schema.types[Int(c.type)].fields.firstIndex(where: { $0.isParent && $0.referencedType != nil }),
        case .ref(let p) = c.fields[f].value
      else { return false }
      k = p
    }
    return true
  }

  /// What an app on `version` can show: no record of a type added later, and no value in a
  /// field added later (compared as the field's default).
  static func visible(_ records: [RecordState], toVersion version: Int, schema: Schema) -> [RecordState] {
    var out: [RecordState] = []
    for var r in records {
      let type = schema.types[Int(r.type)]
      if type.since > version { continue }
      for (f, spec) in type.fields.enumerated() where spec.since > version {
        r.fields[f] = FieldValue(value: spec.initialValue, writer: 0, stamp: .origin)
      }
      out.append(r)
    }
    return out
  }

  /// 9–10. The schema's rules on the final states (every signed-in device's records, every
  /// server's): a reference to a record nobody holds; two live records sharing a unique key.
  mutating func judgeSchemaRules() {
    let schema = world.config.schema
    var views: [[RecordState]] = world.devices.filter { $0.account != nil }.map(\.visibleRecords)
    views += world.servers.map(\.liveRecords)
    var live = Set<RecordKey>()
    for v in views { for r in v { live.insert(r.key) } }
    var dangling = Set<[Int]>()
    var duplicates = Set<[RecordKey]>()
    for v in views {
      var byKey: [[String]: [RecordKey]] = [:]
      for r in v {
        let type = schema.types[Int(r.type)]
        for (f, spec) in type.fields.enumerated() {
          guard spec.referencedType != nil, case .ref(let target) = r.fields[f].value, !live.contains(target) else { continue }
          dangling.insert([Int(r.key), f])
        }
        let keyFields: [Int]
        switch type.uniqueness {
        case nil: continue
        case .singleton?: keyFields = []
        case .fields(let fs)?: keyFields = fs
        }
        let key =
          ["\(world.account(ofRecord: r.key))", type.name]
          + keyFields.map { "\(r.fields[$0].value)" }
        byKey[key, default: []].append(r.key)
      }
      for group in byKey.values where group.count > 1 { duplicates.insert(group.sorted()) }
    }
    for d in dangling.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
      report(ReferenceVerdict.danglingReference, RecordKey(d[0]), d[1])
    }
    for g in duplicates.sorted(by: { $0.lexicographicallyPrecedes($1) }) { report(ReferenceVerdict.logicalDuplicate, g[0]) }
    judgeCascades()
  }

  /// Steps 1–5 for one record.
  mutating func judgeRecord(_ r: RecordKey, resurrected: inout Set<RecordKey>, explained: inout Set<RecordKey>) {
    var intents = effective[r] ?? []
    // 0. A record created again after a delete: an earlier incarnation shows nowhere (a delete
    // concurrent with one of its updates won); the latest is judged below as a record of its
    // own, only its copies counting.
    var earlier = Set<IntentID>()
    var incarnation: IntentID?
    if world.context.isRecreated(r) {
      let (creates, final, groups) = incarnations(of: r)
      for (k, g) in groups.enumerated() where k != final {
        for i in g { earlier.insert(i.id) }
        guard k < creates.count else { continue }
        let c = creates[k]
        let gd = g.filter(Self.isDelete)
        if gd.contains(where: { d in g.contains { !Self.isDelete($0) && concurrent(d.id, $0.id) } }) {
          report(ReferenceVerdict.deleteUpdateConflict, r)
        }
        // Made again at once with the final one: a choice between them, informational.
        guard creates.contains(where: { hb(c.id, $0.id) }) else {
          report(ReferenceVerdict.concurrentOverwrite, r)
          continue
        }
        if world.devices.contains(where: { $0.visibleRecord(r)?.creator == c.id })
          || world.serverRecord(r).map({ !$0.isDeleted && $0.creator == c.id }) == true
        {
          report(ReferenceVerdict.resurrection, r)
          resurrected.insert(r)
          explained.insert(r)
        }
      }
      intents = groups[final]
      incarnation = creates.indices.contains(final) ? creates[final].id : nil
    }
    func visibleAnywhere() -> Bool {
      guard let incarnation else { return visibleOnAnyDevice(r) }
      return world.devices.contains { $0.visibleRecord(r)?.creator == incarnation }
    }
    func live() -> Bool {
      guard let incarnation else { return liveOnServer(r) }
      return world.serverRecord(r).map { !$0.isDeleted && $0.creator == incarnation } ?? false
    }
    let deletes = intents.filter(Self.isDelete)
    let updates = intents.filter { !Self.isDelete($0) }

    // 1. Resurrection.
    if deletes.contains(where: { isQualifying($0.id, on: r) }), visibleAnywhere() || live() {
      report(ReferenceVerdict.resurrection, r)
      resurrected.insert(r)
      explained.insert(r)
    }
    // 2. Delete/update conflict (informational).
    if deletes.contains(where: { d in updates.contains { u in concurrent(d.id, u.id) } }) {
      report(ReferenceVerdict.deleteUpdateConflict, r)
    }
    // 3 and 4, about the first create.
    if let create = intents.first(where: Self.isCreate), case .create(let type, _) = create.kind {
      var stranded = false
      let serverHas = world.serverRecord(r).map { incarnation == nil || $0.creator == incarnation } ?? false
      let creatorShows = world.devices[Int(create.device)].visibleRecord(r).map { incarnation == nil || $0.creator == incarnation } ?? false
      if !serverHas, deletes.isEmpty, creatorShows {
        report(ReferenceVerdict.strandedRecord, r)
        explained.insert(r)
        stranded = true
      }
      if !stranded, schema.types[Int(type)].appendOnly, deletes.isEmpty,
        world.devices.contains(where: {
          ($0.account.map(Int.init) == world.account(ofRecord: r) || $0.account.map { mayRead($0, r) } == true)
            && $0.visibleRecord(r).map { incarnation == nil || $0.creator == incarnation } != true
        }) || !live()
      {
        report(ReferenceVerdict.droppedEvent, r)
        explained.insert(r)
      }
      // A record never deleted that no device and not the server holds: its creation is lost.
      // Unless a de-duplication deleted it and what was written to it is on the copy it kept.
      if !stranded, !schema.types[Int(type)].appendOnly, deletes.isEmpty, !visibleAnywhere(), !live() {
        if !survivesInKeptDuplicate(r, intents) { report(ReferenceVerdict.lostEdit, r) }
        explained.insert(r)
      }
    }
    // 5. Fields of a record live on the server.
    guard let final = world.serverRecord(r), !final.isDeleted, incarnation == nil || final.creator == incarnation else { return }
    let all = effective[r] ?? []
    let seenByDelete = Set(intents.filter { w in deletes.contains { hb(w.id, $0.id) } }.map(\.id)).union(earlier)
    intents = all
    let spec = schema.types[Int(final.type)]
    for f in spec.fields.indices where f < final.fields.count {
      if spec.fields[f].kind == .text {
        judgeText(r, f, final.fields[f], intents: intents, seenByDelete: seenByDelete)
      } else {
        judgeValue(r, f, final.fields[f], spec.fields[f], intents: intents, seenByDelete: seenByDelete)
      }
    }
  }

  /// A record gone everywhere that only cascades deleted, each for a parent whose every delete
  /// was made knowing the record no longer referred to it: the deleting device showed it, had
  /// received every latest write naming the parent that the cascade's device went by, and
  /// none of the latest writes of the cascading field it had received named the parent.
  mutating func judgeCascades() {
    var done = Set<RecordKey>()
    // (A cascade withdrawn with its record — made on a device that then lost access to it, never
    // taken by the server — happened for no one: judged no further, as every withdrawn write.)
    for c in world.facts.cascades where !causality.withdrawn.contains(c.intent) {
      let x = world.log.intents[Int(c.intent) - 1].record
      guard done.insert(x).inserted else { continue }
      let intents = effective[x] ?? []
      let userDeleted = world.log.intents.contains { $0.record == x && $0.ignored == nil && Self.isDelete($0) && $0.trigger == 0 }
      guard !userDeleted, !visibleOnAnyDevice(x), !liveOnServer(x) else { continue }
      var unjustifiedField: Int32?
      var justified = false
      for other in world.facts.cascades where world.log.intents[Int(other.intent) - 1].record == x && !causality.withdrawn.contains(other.intent) {
        let went = Set(causality.context(of: other.intent) ?? [])
        let basis = intents.filter { $0.id != other.intent && went.contains($0.id) && $0.writtenFields.contains(other.field) }
        let naming = basis.filter { w in !basis.contains { hb(w.id, $0.id) } && Self.written(w, field: Int(other.field)) == .ref(other.parent) }
        for d in (effective[other.parent] ?? []).filter(Self.isDelete) {
          guard let known = causality.knowledge(atDelete: d.id, of: x) else {
            justified = true
            break
          }
          if naming.contains(where: { !known.contains($0.id) }) {
            justified = true
            break
          }
          let writes = intents.filter { known.contains($0.id) && $0.writtenFields.contains(other.field) }
          let latest = writes.filter { w in !writes.contains { hb(w.id, $0.id) } }
          if latest.contains(where: { Self.written($0, field: Int(other.field)) == .ref(other.parent) }) {
            justified = true
            break
          }
          if unjustifiedField == nil { unjustifiedField = other.field }
        }
        if justified { break }
      }
      if !justified, let f = unjustifiedField { report(ReferenceVerdict.danglingReference, x, Int(f)) }
    }
  }

  /// `unique=dedupe`: whether the engine deleted `r` as a duplicate of a record still live on
  /// the server that has, in every field written to `r`, the value `r`'s last write of it
  /// wrote (a text edit on `r` never counts as kept).
  func survivesInKeptDuplicate(_ r: RecordKey, _ intents: [Intent]) -> Bool {
    let kept = world.log.intents.compactMap { $0.record == r && $0.ignored == nil ? $0.keptInstead : nil }
    guard let survivor = kept.lazy.compactMap({ self.world.serverRecord($0) }).first(where: { !$0.isDeleted }) else { return false }
    let fields = Set(intents.flatMap(\.writtenFields))
    for f in fields {
      guard let last = intents.last(where: { $0.writtenFields.contains(f) }), let value = Self.written(last, field: Int(f)),
        Self.looksSame(value, survivor.fields[Int(f)].value)
      else { return false }
    }
    return true
  }

  /// The value an intent wrote to field `f` (a create's or set's last write of it), if any.
  static func written(_ i: Intent, field f: Int) -> Value? {
    switch i.kind {
    case .create(_, let values), .set(let values):
      return values.last(where: { Int($0.field) == f })?.value
    default:
      return nil
    }
  }

  /// LOSE(l).
  mutating func lose(_ l: Intent, _ r: RecordKey, _ f: Int, intents: [Intent], seenByDelete: Set<IntentID>) {
    if seenByDelete.contains(l.id) { return }
    if causality.droppedUnsent(l.id) {
      report(ReferenceVerdict.lostEdit, r, f)
    } else if intents.contains(where: { concurrent($0.id, l.id) }) {
      report(ReferenceVerdict.lostEdit, r, f)
    } else {
      report(ReferenceVerdict.staleOverwrite, r, f)
    }
  }

  /// Step 5 for a field that is not text.
  mutating func judgeValue(_ r: RecordKey, _ f: Int, _ final: FieldValue, _ spec: FieldSpec, intents: [Intent], seenByDelete: Set<IntentID>) {
    var final = final
    final.value = final.value.asWritten
    let writes: [(intent: Intent, value: Value)] = intents.compactMap { i in
      Self.written(i, field: f).map { (i, $0) }
    }
    let live = writes.filter { !seenByDelete.contains($0.intent.id) }
    func superseded(_ a: IntentID) -> Bool { live.contains { hb(a, $0.intent.id) } }
    let frontier = live.filter { !superseded($0.intent.id) && $0.value != final.value }

    if final.writer == 0 {
      if writes.isEmpty {
        if final.value != spec.initialValue { report(ReferenceVerdict.phantomValue, r, f) }
      } else {
        for l in frontier { lose(l.intent, r, f, intents: intents, seenByDelete: seenByDelete) }
      }
      return
    }
    guard let w = writes.first(where: { $0.intent.id == final.writer && $0.value == final.value }) else {
      report(ReferenceVerdict.phantomValue, r, f)
      return
    }
    let latest = seenByDelete.contains(w.intent.id) || !superseded(w.intent.id)
    for l in frontier {
      if latest {
        guard l.intent.id != w.intent.id else { continue }
        if concurrent(l.intent.id, w.intent.id) && !causality.droppedUnsent(l.intent.id) {
          report(spec.mutable ? ReferenceVerdict.concurrentOverwrite : ReferenceVerdict.lostEdit, r, f)
        } else {
          lose(l.intent, r, f, intents: intents, seenByDelete: seenByDelete)
        }
      } else {
        lose(l.intent, r, f, intents: intents, seenByDelete: seenByDelete)
      }
    }
  }

  /// Step 5 for a text field.
  mutating func judgeText(_ r: RecordKey, _ f: Int, _ final: FieldValue, intents: [Intent], seenByDelete: Set<IntentID>) {
    guard case .text(let text) = final.value else {
      report(ReferenceVerdict.phantomValue, r, f)
      return
    }
    // Duplicates: a visible repeat of an id seen earlier in the text.
    var seen = Set<AtomID>()
    var duplicate = false
    for atom in text.atoms {
      if seen.contains(atom.id) && atom.isVisible { duplicate = true }
      seen.insert(atom.id)
    }
    if duplicate { report(ReferenceVerdict.duplicateEvent, r, f) }

    // Visible in the final text: some occurrence of the id is visible.
    let visible = Set(text.atoms.filter(\.isVisible).map(\.id))
    let finalString = text.string
    var removers: [(id: IntentID, removed: [AtomID])] = []
    var setters: [IntentID] = []
    for i in intents {
      switch i.kind {
      case .replace(let field, _, _, let removed) where Int(field) == f: removers.append((i.id, removed))
      case .set(let values) where values.contains(where: { Int($0.field) == f }): setters.append(i.id)
      default: break
      }
    }
    func excused(_ x: AtomID, insertedBy a: IntentID) -> Bool {
      removers.contains { $0.removed.contains(x) && hb(a, $0.id) } || setters.contains { $0 != a && hb(a, $0) }
    }

    for a in intents {
      var inserted = 0
      var removed: [AtomID] = []
      switch a.kind {
      case .create, .set:
        guard case .text(let v)? = Self.written(a, field: f) else { continue }
        if v.string == finalString { continue }
        inserted = v.string.unicodeScalars.count
      case .append(let field, let s) where Int(field) == f:
        inserted = s.unicodeScalars.count
      case .replace(let field, _, let new, let gone) where Int(field) == f:
        inserted = new.unicodeScalars.count
        removed = gone
      default:
        continue
      }
      let missing = (0..<inserted).contains { k in
        let x = AtomID(intent: a.id, offset: Int32(k))
        return !visible.contains(x) && !excused(x, insertedBy: a.id)
      }
      let revived = removed.contains { visible.contains($0) }
      if missing || revived { lose(a, r, f, intents: intents, seenByDelete: seenByDelete) }
    }
  }

  /// Two values as a user sees them: text by its visible string, anything else by `==`.
  static func looksSame(_ a: Value, _ b: Value) -> Bool {
    if case .text(let x) = a, case .text(let y) = b { return x.string == y.string }
    return a == b
  }

  /// The first difference between two key-ordered lists of records: a record on one side only
  /// (field nil), or the first field that looks different in a record on both sides (a field
  /// present on one side only counts as different).
  static func firstDifference(_ a: [RecordState], _ b: [RecordState]) -> (RecordKey, Int?)? {
    var i = 0
    var j = 0
    while i < a.count || j < b.count {
      if j == b.count || (i < a.count && a[i].key < b[j].key) { return (a[i].key, nil) }
      if i == a.count || b[j].key < a[i].key { return (b[j].key, nil) }
      let x = a[i]
      let y = b[j]
      for f in 0..<max(x.fields.count, y.fields.count) {
        guard f < x.fields.count, f < y.fields.count else { return (x.key, f) }
        if !looksSame(x.fields[f].value, y.fields[f].value) { return (x.key, f) }
      }
      i += 1
      j += 1
    }
    return nil
  }
}

extension Judge {
  /// Step 8b. Where each device's asset files came from and went, replayed from the raw
  /// observations: the app's own writes (the intent log), the copies the device took in (a file
  /// arrives with a copy that carries the asset's data), the app's file deletions and the
  /// staging purges — a fetched file is in staging, and purged with it, under
  /// `fetched-assets=keep-staging`, and always on a device a user's app drives, whose own file
  /// changes (copies out of staging, deletions) are observed as they are made. One
  /// `missing-asset` per device, record and asset field whose value's file is not there at the
  /// end (or whose value carries no data).
  mutating func judgeAssets() {
    let schema = world.config.schema
    let assetFields = schema.types.map { t in t.fields.indices.filter { t.fields[$0].kind == .asset } }
    guard assetFields.contains(where: { !$0.isEmpty }) else { return }
    let keepsStaging = world.config.policy.settings.fetchedAssets == .keepStaging
    enum Step {
      case wrote(String)
      case arrived(String)
      case deleted(String)
      case purged
      case app(String, own: Bool, staged: Bool)
    }
    for device in world.devices {
      let d = device.config.index
      // (A user's app's engine, as CKSyncEngine, leaves every fetched file in staging: the app
      // copies it out, or not.)
      let staging = keepsStaging || (!world.drivers.isEmpty && world.drivers[Int(d)] != nil)
      var steps: [(time: VirtualTime, order: Int, step: Step)] = []
      for i in world.log.intents where i.device == d && i.ignored == nil {
        let values: [FieldWrite]
        switch i.kind {
        case .create(_, let v), .set(let v): values = v
        default: continue
        }
        for w in values { if case .content(let c) = w.value, c.isAsset { steps.append((i.trueTime, steps.count, .wrote(c.name))) } }
      }
      for o in world.facts.observations {
        switch o {
        case .received(d, let copy, let at) where !copy.isDeleted:
          for f in assetFields[Int(copy.type)] {
            if case .content(let c) = copy.fields[f].value, c.isAsset, c.hasData { steps.append((at, steps.count, .arrived(c.name))) }
          }
        case .fileDeleted(d, let name, let at): steps.append((at, steps.count, .deleted(name)))
        case .stagingPurged(d, let at): steps.append((at, steps.count, .purged))
        case .appFile(d, let name, let own, let staged, let at): steps.append((at, steps.count, .app(name, own: own, staged: staged)))
        default: continue
        }
      }
      // In time order; at one time, the app's writes first (the log and the observations are each in order).
      steps.sort { ($0.time, $0.order) < ($1.time, $1.order) }
      var own: Set<String> = []
      var staged: Set<String> = []
      for s in steps {
        switch s.step {
        case .wrote(let n):
          own.insert(n)
          staged.remove(n)
        case .arrived(let n) where !own.contains(n):
          if staging { staged.insert(n) } else { own.insert(n) }
        case .arrived: break
        case .deleted(let n):
          own.remove(n)
          staged.remove(n)
        case .purged: staged = []
        case .app(let n, let o, let s):
          if o { own.insert(n) } else { own.remove(n) }
          if s { staged.insert(n) } else { staged.remove(n) }
        }
      }
      for r in device.visibleRecords {
        for f in assetFields[Int(r.type)] {
          guard case .content(let c) = r.fields[f].value, c.isAsset else { continue }
          if !c.hasData || !(own.contains(c.name) || staged.contains(c.name)) { report(ReferenceVerdict.missingAsset, r.key, f) }
        }
      }
    }
  }
}
