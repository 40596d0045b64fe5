import Replica
import Simulator

/// Causality and delivery rebuilt from a run's raw observations alone (never from the intent
/// log's own contexts): which intents each intent's device had received on its record when it
/// made it, which intents reached the server, and where records reappeared after vanishing.
///
/// Built by one walk over `world.facts.observations`, keeping for every device D and record r
/// the set K[D][r] of intents D has received:
/// * `.intent(id)` of an effective intent on r by D: ctx(id) = K[D][r] ∪ {id}; K[D][r] = ctx(id).
/// * `.received(device: D, copy: C)`: K[D][C.key] ∪= ctx(x) for every x in provenance(C).
///
/// `a → b` iff both are effective, on one record, a ≠ b and a ∈ ctx(b).
package struct ReferenceCausality: Sendable {
  /// A record that had been visible on a device, vanished, and became visible again there.
  package struct Reappearance: Hashable, Sendable {
    /// The device it reappeared on.
    package var device: Int32
    /// The record.
    package var record: RecordKey
    /// The delete intents of the record the device had applied by then (made there, or taken
    /// in with a deleted copy), in the order they came.
    package var appliedDeletes: [IntentID]
    /// The index of the `.visibility` observation in `world.facts.observations`.
    package var observation: Int
  }

  /// Per intent id (index 0 unused): the record of an effective intent and its rebuilt context,
  /// or nil for an ignored intent (or one never observed).
  let contexts: [Set<IntentID>?]
  let records: [RecordKey]
  let reached: Set<IntentID>
  let dropped: Set<IntentID>
  /// Intents whose writes the server refused for lack of permission and their device took back,
  /// telling the user: they never reached the server, and nobody lost them.
  let withdrawn: Set<IntentID>
  /// Every reappearance, in observation order.
  package let reappearances: [Reappearance]
  /// Per delete of a record of a type others refer to: for each record of a referring type
  /// visible on the deleting device then, the intents on it that device had received.
  let deleteKnowledge: [IntentID: [RecordKey: Set<IntentID>]]

  /// Rebuilds causality from `world.facts.observations`. The world must have been run with
  /// `WorldConfig.recordObservations = true` (a precondition fails if intents exist but no
  /// observations were recorded).
  package init(_ world: SyncWorld) {
    let log = world.log.intents
    precondition(
      log.isEmpty || !world.facts.observations.isEmpty,
      "ReferenceCausality needs a world run with WorldConfig.recordObservations = true")
    for (index, intent) in log.enumerated() {
      precondition(Int(intent.id) == index + 1, "intent ids must be dense and in order")
    }
    func isEffective(_ id: IntentID) -> Bool {
      id > 0 && Int(id) <= log.count && log[Int(id) - 1].ignored == nil
    }
    /// The effective intents on `copy.key` that a copy carries (spec order, duplicates kept).
    func provenance(_ copy: RecordState) -> [IntentID] {
      var ids: [IntentID] = [copy.creator]
      if copy.deletedBy != 0 { ids.append(copy.deletedBy) }
      for field in copy.fields {
        if field.writer != 0 { ids.append(field.writer) }
        if case .text(let text) = field.value {
          for atom in text.atoms {
            if atom.id.intent != 0 { ids.append(atom.id.intent) }
            if atom.deletedBy != 0 { ids.append(atom.deletedBy) }
          }
        }
      }
      // Defensive: an id that is 0, ignored, or (impossibly) of another record carries nothing.
      return ids.filter { isEffective($0) && log[Int($0) - 1].record == copy.key }
    }

    /// Whether `id` wrote one of the `changed` fields of `copy` (so that a save of those fields
    /// carries it, even when it is also the record's creator).
    func writes(_ id: IntentID, in copy: RecordState, _ changed: FieldMask) -> Bool {
      for (i, field) in copy.fields.enumerated() where changed.contains(field: i) {
        if field.writer == id { return true }
        if case .text(let text) = field.value, text.atoms.contains(where: { $0.id.intent == id || $0.deletedBy == id }) { return true }
      }
      return false
    }

    /// The intents a write the server received carries: a delete its delete; a save the fields
    /// it says it changed.
    func carried(_ copy: RecordState, isDelete: Bool, changed: FieldMask) -> [IntentID] {
      if isDelete { return isEffective(copy.deletedBy) ? [copy.deletedBy] : [] }
      var fieldsOnly = copy
      fieldsOnly.deletedBy = 0
      for i in fieldsOnly.fields.indices where !changed.contains(field: i) {
        fieldsOnly.fields[i] = FieldValue(value: .null, writer: 0, stamp: .origin)
      }
      return provenance(fieldsOnly).filter { $0 != copy.creator || writes(copy.creator, in: copy, changed) }
    }

    var contexts = [Set<IntentID>?](repeating: nil, count: log.count + 1)
    var records = [RecordKey](repeating: 0, count: log.count + 1)
    for intent in log { records[Int(intent.id)] = intent.record }
    var reached = Set<IntentID>()
    var madeSoFar: [IntentID] = []
    var droppedCandidates = Set<IntentID>()
    var withdrawnCandidates = Set<IntentID>()
    var taken = Set<IntentID>()
    var reappearances: [Reappearance] = []
    // Per device (grown on demand), per record: lookups only, never iterated.
    var received: [[RecordKey: Set<IntentID>]] = []
    var appliedDeletes: [[RecordKey: [IntentID]]] = []
    var everVisible: [Set<RecordKey>] = []
    var vanished: [Set<RecordKey>] = []
    // Per device: the instant its account last changed, and the records whose last vanishing
    // was at such an instant.
    var accountChangedAt: [VirtualTime?] = []
    var withTheAccount: [Set<RecordKey>] = []
    // Per device, per record created again: the latest incarnation it made or received.
    var latestIncarnation: [[RecordKey: IntentID]] = []
    func grow(_ device: Int32) {
      precondition(device >= 0, "negative device index")
      while received.count <= Int(device) {
        received.append([:])
        appliedDeletes.append([:])
        everVisible.append([])
        vanished.append([])
        accountChangedAt.append(nil)
        withTheAccount.append([])
        latestIncarnation.append([:])
      }
    }
    /// A record created again, by `creator`: on device `d` the deletes before it were of an
    /// earlier incarnation, and the record showing again is no reappearance.
    func newIncarnation(_ d: Int, _ record: RecordKey, _ creator: IntentID) {
      latestIncarnation[d][record] = max(latestIncarnation[d][record] ?? 0, creator)
      guard (appliedDeletes[d][record] ?? []).allSatisfy({ !(contexts[Int($0)] ?? []).contains(creator) }) else { return }
      appliedDeletes[d][record] = nil
      vanished[d].remove(record)
    }
    func applyDelete(_ id: IntentID, device: Int, record: RecordKey) {
      var list = appliedDeletes[device][record] ?? []
      if !list.contains(id) { list.append(id) }
      appliedDeletes[device][record] = list
    }

    // Record types from the creates; which types refer to which (by a ref field).
    let schema = world.config.schema
    var typeOf: [RecordKey: Int] = [:]
    for intent in log where intent.ignored == nil {
      if case .create(let type, _) = intent.kind, typeOf[intent.record] == nil { typeOf[intent.record] = Int(type) }
    }
    let referring: [Set<Int>] = schema.types.map { target in
      Set(schema.types.indices.filter { t in schema.types[t].fields.contains { $0.referencedType == target.name } })
    }
    var visibleNow: [Set<RecordKey>] = []
    var deleteKnowledge: [IntentID: [RecordKey: Set<IntentID>]] = [:]

    let settingsDeletes = Set(world.facts.settingsDeletes)
    for (index, observation) in world.facts.observations.enumerated() {
      switch observation {
      case .intent(let id):
        guard isEffective(id) else { continue }
        madeSoFar.append(id)
        let intent = log[Int(id) - 1]
        grow(intent.device)
        let d = Int(intent.device)
        var context = received[d][intent.record] ?? []
        context.insert(id)
        contexts[Int(id)] = context
        received[d][intent.record] = context
        if case .delete = intent.kind, let type = typeOf[intent.record], !referring[type].isEmpty {
          while visibleNow.count <= d { visibleNow.append([]) }
          var known: [RecordKey: Set<IntentID>] = [:]
          for r in visibleNow[d] where typeOf[r].map({ referring[type].contains($0) }) == true { known[r] = received[d][r] ?? [] }
          deleteKnowledge[id] = known
        }
        // (A purge in Settings is not applied by the app on that device.)
        if case .delete = intent.kind, !settingsDeletes.contains(id) { applyDelete(id, device: d, record: intent.record) }
        if case .create = intent.kind, world.context.isRecreated(intent.record) { newIncarnation(d, intent.record, id) }

      case .received(let device, let copy, _):
        grow(device)
        let d = Int(device)
        var known = received[d][copy.key] ?? []
        for x in provenance(copy) {
          // An intent is observed before any copy carries it; {x} covers a log that says otherwise.
          known.formUnion(contexts[Int(x)] ?? [x])
        }
        received[d][copy.key] = known
        if !copy.isDeleted, world.context.isRecreated(copy.key) { newIncarnation(d, copy.key, copy.creator) }
        // (A deleted copy of an incarnation older than one the device has is not a delete of it.)
        if copy.isDeleted && isEffective(copy.deletedBy) && copy.creator >= latestIncarnation[d][copy.key] ?? 0 {
          applyDelete(copy.deletedBy, device: d, record: copy.key)
        }

      case .serverReceived(let copy, let isDelete, let changed, _):
        reached.formUnion(carried(copy, isDelete: isDelete, changed: changed))

      case .serverStored(let copy, _):
        reached.formUnion(provenance(copy))

      case .serverTook(let copy, let isDelete, let changed, _):
        taken.formUnion(carried(copy, isDelete: isDelete, changed: changed))

      case .droppedUnsent(let device, let keys, _):
        // Every intent this device had made so far on these records had a pending upload that
        // may be the one dropped; whether it was is settled below (it never reached the server).
        for id in madeSoFar where log[Int(id) - 1].device == device && keys.contains(log[Int(id) - 1].record) {
          droppedCandidates.insert(id)
        }

      case .withdrawn(let device, let keys, _):
        for id in madeSoFar where log[Int(id) - 1].device == device && keys.contains(log[Int(id) - 1].record) {
          withdrawnCandidates.insert(id)
        }

      case .accountChanged(let device, let at):
        grow(device)
        accountChangedAt[Int(device)] = at

      case .stagingPurged, .fileDeleted, .appFile:
        // Files say nothing of causality (judged in step 8b).
        break

      case .visibility(let device, let key, let visible, let at):
        grow(device)
        let d = Int(device)
        while visibleNow.count <= d { visibleNow.append([]) }
        if visible { visibleNow[d].insert(key) } else { visibleNow[d].remove(key) }
        if visible {
          if vanished[d].contains(key) {
            // (What a device stopped showing when its account changed went with the account, and
            // comes back with it: no delete of it is counted.)
            let deletes = withTheAccount[d].contains(key) ? [] : appliedDeletes[d][key] ?? []
            reappearances.append(Reappearance(device: device, record: key, appliedDeletes: deletes, observation: index))
          }
          everVisible[d].insert(key)
        } else if everVisible[d].contains(key) {
          vanished[d].insert(key)
          if accountChangedAt[d] == at { withTheAccount[d].insert(key) } else { withTheAccount[d].remove(key) }
        }
      }
    }
    self.contexts = contexts
    self.records = records
    self.reached = reached
    self.dropped = droppedCandidates.subtracting(reached)
    // (Unless the server took it: saved it, or applied it as a delete.)
    self.withdrawn = withdrawnCandidates.subtracting(taken)
    self.reappearances = reappearances
    self.deleteKnowledge = deleteKnowledge
  }

  /// What the device that made `delete` had received of record `r`'s intents then, when `r`
  /// was of a type that may refer to the deleted record's and visible there; else nil.
  package func knowledge(atDelete delete: IntentID, of r: RecordKey) -> Set<IntentID>? {
    deleteKnowledge[delete]?[r]
  }

  /// Whether `id` is an effective intent whose making was observed.
  package func isEffective(_ id: IntentID) -> Bool {
    id > 0 && Int(id) < contexts.count && contexts[Int(id)] != nil
  }

  /// The rebuilt causal context of an effective intent — every intent on its record its device
  /// had received when it made it, itself included — in id order; nil for an ignored intent.
  package func context(of id: IntentID) -> [IntentID]? {
    guard isEffective(id) else { return nil }
    return contexts[Int(id)]!.sorted()
  }

  /// `a → b`: both effective, on one record, different, and `a` in the context of `b`.
  /// Intents on different records are never ordered.
  package func happenedBefore(_ a: IntentID, _ b: IntentID) -> Bool {
    guard a != b, isEffective(a), isEffective(b), records[Int(a)] == records[Int(b)] else { return false }
    return contexts[Int(b)]!.contains(a)
  }

  /// `a ∥ b`: different, and neither happened before the other.
  package func isConcurrent(_ a: IntentID, _ b: IntentID) -> Bool {
    a != b && !happenedBefore(a, b) && !happenedBefore(b, a)
  }

  /// Whether the intent reached the server: a save the server received carried it in a field
  /// the save said it changed (or a delete carried it as its delete), or a version the server
  /// stored carried it.
  package func reachedServer(_ id: IntentID) -> Bool {
    reached.contains(id)
  }

  /// Whether the intent was never sent because its device's outbox dropped it: it never reached
  /// the server, and after it was made its device dropped the record's pending upload unsent.
  package func droppedUnsent(_ id: IntentID) -> Bool {
    dropped.contains(id)
  }
}
