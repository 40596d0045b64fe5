import Replica
@_spi(Kernel) import Simulator

extension Oracle {
  /// Judges every field of a record the server holds (the converged state) by the core rule of
  /// `oracle.md`: the frontier of the writes to `(record, field)`.
  /// `earlier`: for a record created again after a delete, the intents of its earlier
  /// incarnations, deleted with them (their absence is no loss).
  mutating func judgeFields(_ record: RecordState, _ intents: [Intent], earlier: Set<IntentID> = []) {
    let type = schema.types[Int(record.type)]
    // A record that is live although someone deleted it came back through an update concurrent
    // with the delete (a delete/update conflict the update won). The writes the deleting device
    // had seen were deleted with the record, knowingly: their absence is not a loss.
    let deletes = intents.filter { $0.isDelete }
    if deletes.isEmpty {
      superseded = []
    } else {
      let seen = Self.happenedBeforeSome(intents, of: deletes)
      superseded = Set(intents.indices.lazy.filter { seen[$0] }.map { intents[$0].id })
    }
    if !earlier.isEmpty { superseded.formUnion(earlier) }
    for (index, spec) in type.fields.enumerated() {
      let f = Int32(index)
      if spec.kind == .text {
        judgeText(record, f, spec, intents)
      } else {
        judgeValue(record, f, spec, intents)
      }
    }
  }

  /// Creates with a value for `f`, and sets of `f`.
  func writes(to f: Int32, _ intents: [Intent]) -> [Intent] {
    intents.filter { i in
      switch i.kind {
      case .create(_, let values), .set(let values): values.contains { $0.field == f }
      default: false
      }
    }
  }

  func writtenValue(_ intent: Intent, _ f: Int32) -> Value? {
    switch intent.kind {
    case .create(_, let values), .set(let values): values.first { $0.field == f }?.value
    default: nil
    }
  }

  mutating func judgeValue(_ record: RecordState, _ f: Int32, _ spec: FieldSpec, _ intents: [Intent]) {
    // Names are looked up only for a report (most fields have nothing to report).
    var field: String { spec.name }
    var r: String { name(record.key) }
    var rRef: RecordRef { recordRef(record.key) }
    var fRef: FieldRef { FieldRef(index: Int(f), name: spec.name) }
    var final = record.fields[Int(f)]
    final.value = final.value.asWritten
    let w = writes(to: f, intents)
    // Writes a delete had seen are judged no further (see `judgeFields`): the frontier is
    // taken among the others.
    let live = superseded.isEmpty ? w : w.filter { !superseded.contains($0.id) }
    // A write of the value the field ends with has its effect present: it is not lost, and
    // concurrent writes of one value are no conflict at all.
    let overtaken = Self.happenedBeforeSome(live, of: live)
    let frontier = live.indices.filter { !overtaken[$0] && writtenValue(live[$0], f) != final.value }.map { live[$0] }
    if final.writer == 0 {
      guard !w.isEmpty else {
        if final.value != spec.initialValue {
          anomalies.append(
            Anomaly(
              kind: .phantomValue, record: rRef, field: fRef,
              explanation: "\(r).\(field) shows \(render(final.value)), which no intent wrote and is not the default."))
        }
        return
      }
      for l in frontier {
        lose(
          l, f: f, spec: spec, record: record, intents: intents, ending: .defaultValue(final.value), winner: nil)
      }
      return
    }
    guard let winner = w.first(where: { $0.id == final.writer }), writtenValue(winner, f) == final.value else {
      anomalies.append(
        Anomaly(
          kind: .phantomValue, record: rRef, field: fRef, intents: [Self.id(final.writer)],
          explanation:
            "\(r).\(field) shows \(render(final.value)), which no intent wrote to it (the value claims to come from \(Self.id(final.writer)))."))
      return
    }
    let winnerIsLatest = superseded.contains(winner.id) || !live.contains { winner.happenedBefore($0) }
    if winnerIsLatest {
      // The winner is in the frontier, or is a value the record was revived with: writes
      // concurrent with it were a last-writer-wins choice; later ones were lost.
      for l in frontier where l.id != winner.id {
        guard concurrent(l, winner), neverSentCause(l) == nil else {
          lose(
            l, f: f, spec: spec, record: record, intents: intents, ending: .olderValue(final.value, from: winner, field: f), winner: winner)
          continue
        }
        if spec.mutable {
          anomalies.append(
            Anomaly(
              kind: .concurrentOverwrite, record: rRef, field: fRef, intents: [Self.id(l.id), Self.id(winner.id)],
              devices: [deviceRef(l.device), deviceRef(winner.device)], at: l.trueTime,
              explanation:
                "\(describe(l, field: f)) and \(describe(winner, field: f)) were concurrent on a mutable field; last-writer-wins kept \(render(final.value))."
            ))
        } else {
          anomalies.append(
            Anomaly(
              kind: .lostEdit, record: rRef, field: fRef, intents: [Self.id(l.id), Self.id(winner.id)],
              devices: [deviceRef(l.device), deviceRef(winner.device)], at: l.trueTime,
              explanation:
                "\(describe(l, field: f)) was overwritten by \(describe(winner, field: f)), a concurrent write; \(field) is not declared mutable, so last-writer-wins lost an edit."
            ))
        }
      }
    } else {
      for l in frontier {
        lose(
          l, f: f, spec: spec, record: record, intents: intents, ending: .olderValue(final.value, from: winner, field: f), winner: winner)
      }
    }
  }

  /// A frontier write whose effect is gone: a stale overwrite if nothing concurrent touched the
  /// record, else a lost edit (a concurrent save carried the old value along).
  /// When an app version that does not know field `f` saved the whole record after intent `l`
  /// (`unknown-fields=drop`): why the value is gone, and the device.
  func erasureCause(_ key: RecordKey, _ f: Int32, after l: Intent) -> (String, Int32)? {
    for e in world.facts.events where e.intentsBefore >= l.id {
      guard case .erasedUnknownFields(key, let fields, let version) = e.fact, fields.contains(f) else { continue }
      return (
        "\(deviceName(e.device)), running app version \(version), which does not know \(schema.types[Int(typeOf(key) ?? 0)].name).\(fieldName(typeOf(key) ?? 0, f)), saved the whole record without it at \(e.time) (unknown-fields=drop: a decoded model has no place for fields it does not know)",
        e.device
      )
    }
    return nil
  }

  /// What a lost write's field ended as, for the sentences of ``lose(_:f:spec:record:intents:ending:winner:)``
  /// (built only for the anomaly reported, if any).
  enum Ending {
    /// The schema's default value.
    case defaultValue(Value)
    /// An older value, written by `from`.
    case olderValue(Value, from: Intent, field: Int32)
    /// Text without the write's characters: the field (`note.body`) and its final string.
    case textWithout(field: String, final: String)
  }

  /// "the default value …", "the older value … from …", "a version of … without it (…)".
  func finalText(_ ending: Ending) -> String {
    switch ending {
    case .defaultValue(let v): "the default value \(render(v))"
    case .olderValue(let v, let winner, let f): "the older value \(render(v)) from \(describe(winner, field: f))"
    case .textWithout(let field, let final): "a version of \(field) without it (\(quote(final)))"
    }
  }

  /// "the default value …", "… from …", or the quoted final text.
  func endedAs(_ ending: Ending) -> String {
    switch ending {
    case .defaultValue(let v): "the default value \(render(v))"
    case .olderValue(let v, let winner, let f): "\(render(v)) from \(describe(winner, field: f))"
    case .textWithout(_, let final): quote(final)
    }
  }

  mutating func lose(
    _ l: Intent, f: Int32, spec: FieldSpec, record: RecordState, intents: [Intent], ending: Ending, winner: Intent?
  ) {
    if superseded.contains(l.id) { return }
    let r = name(record.key)
    let rRef = recordRef(record.key)
    let fRef = FieldRef(index: Int(f), name: spec.name)
    let field = spec.name
    let rival = intents.first { concurrent($0, l) }
    var involved = [Self.id(l.id)]
    var devices = [deviceRef(l.device)]
    if let winner {
      involved.append(Self.id(winner.id))
      if !devices.contains(deviceRef(winner.device)) { devices.append(deviceRef(winner.device)) }
    }
    if let cause = neverSentCause(l) {
      // Nothing was ordered wrongly: the edit was never sent.
      anomalies.append(
        Anomaly(
          kind: .lostEdit, record: rRef, field: fRef, intents: involved, devices: devices, at: l.trueTime,
          explanation: "\(describe(l, field: f)) never reached the server — \(cause) — and \(r).\(field) ended as \(endedAs(ending))."))
      return
    }
    if winner == nil, let (cause, device) = erasureCause(record.key, f, after: l) {
      if !devices.contains(deviceRef(device)) { devices.append(deviceRef(device)) }
      // Judged like any loss to an older value: a lost edit when an intent concurrent with it
      // touched the record (the old version's save that erased it, usually), else a stale
      // overwrite (the old version had never even received it).
      anomalies.append(
        Anomaly(
          kind: rival == nil ? .staleOverwrite : .lostEdit, record: rRef, field: fRef, intents: involved, devices: devices, at: l.trueTime,
          explanation: "\(describe(l, field: f)) was erased by an older app version: \(cause); \(r).\(field) ended as \(endedAs(ending))."))
      return
    }
    if let rival {
      if !involved.contains(Self.id(rival.id)) { involved.append(Self.id(rival.id)) }
      if !devices.contains(deviceRef(rival.device)) { devices.append(deviceRef(rival.device)) }
      // The final value is older than this write, so LWW did not pick among concurrent writes:
      // a lost edit even on a mutable field.
      let kind: AnomalyKind = .lostEdit
      // Prefer naming the concurrent intent that wrote the surviving value.
      let how: String
      if let w = winner, concurrent(w, l) {
        how =
          "when \(describe(w, field: f)), a concurrent write to the same field, won (\(judgesAnApp ? "the app's merge kept it" : "last-writer-wins"))"
      } else if !rival.writtenFields.contains(f), judgesAnApp {
        how = "when \(describe(rival)), saved concurrently, brought it back in its whole record and the app's code applied it over the edit"
      } else if !rival.writtenFields.contains(f) {
        how = "when \(describe(rival)) saved the whole record concurrently (record-level LWW)"
      } else {
        how =
          "although it had already seen that value, while \(describe(rival, field: f)) wrote the same field concurrently: last-writer-wins brought an older value back"
      }
      anomalies.append(
        Anomaly(
          kind: kind, record: rRef, field: fRef, intents: involved, devices: devices, at: l.trueTime,
          explanation: "\(describe(l, field: f)) was replaced by \(finalText(ending)) \(how)."))
    } else {
      anomalies.append(
        Anomaly(
          kind: .staleOverwrite, record: rRef, field: fRef, intents: involved, devices: devices, at: l.trueTime,
          explanation:
            "\(describe(l, field: f)) lost to \(finalText(ending)), which it had already seen; no concurrent edit touched \(r), so the order itself was wrong\(clockNote)."
        ))
    }
  }

  /// Text is judged per character: each intent's inserted characters must be present, and the
  /// ones a replacement removed absent, unless an intent that happened after it removed them.
  mutating func judgeText(_ record: RecordState, _ f: Int32, _ spec: FieldSpec, _ intents: [Intent]) {
    let r = name(record.key)
    let rRef = recordRef(record.key)
    let fRef = FieldRef(index: Int(f), name: spec.name)
    guard case .text(let text) = record.fields[Int(f)].value else {
      anomalies.append(Anomaly(kind: .phantomValue, record: rRef, field: fRef, explanation: "\(r).\(spec.name) is not text."))
      return
    }
    // Where each character is: visible, or removed by which intent.
    let state = TextAtomStates(text)
    let duplicates = state.duplicates
    let finalString = text.string
    if let d = duplicates.first {
      let i = log[d.intent]
      anomalies.append(
        Anomaly(
          kind: .duplicateEvent, record: rRef, field: fRef, intents: [Self.id(d.intent)], devices: [deviceRef(i.device)], at: i.trueTime,
          explanation:
            "text inserted by \(describe(i)) appears \(duplicates.filter { $0.intent == d.intent }.count + 1) times in \(r).\(spec.name): the insert was applied more than once."
        ))
    }
    // Who removed each character: replacements name what they took out; a set of the field
    // removes all it held. A character taken out by an intent that had seen its insert is
    // excused whether or not a marker of it survives (an append, then a replace of it, both
    // lost to a concurrent save of the whole text: only the replace is lost).
    var removers: [AtomID: [Intent]] = [:]
    var setters: [Intent] = []
    for i in intents {
      switch i.kind {
      case .replace(let field, _, _, let gone) where field == f:
        for a in gone { removers[a, default: []].append(i) }
      case .set(let values) where values.contains(where: { $0.field == f }):
        setters.append(i)
      default:
        break
      }
    }
    // Whether a set of the field was made knowing the intent (the same for each of its characters).
    let knownBySetter = Self.happenedBeforeSome(intents, of: setters)
    func excused(_ atom: AtomID, of k: Int) -> Bool {
      if let by = removers[atom], by.contains(where: { intents[k].happenedBefore($0) }) { return true }
      return knownBySetter[k]
    }
    for (k, intent) in intents.enumerated() {
      let inserted: Int
      var removed: [AtomID] = []
      switch intent.kind {
      case .create(_, let values), .set(let values):
        guard let v = values.first(where: { $0.field == f }), case .text(let t) = v.value else { continue }
        // A write of the text the field ends with is not lost.
        let written = t.string
        if written == finalString { continue }
        inserted = written.unicodeScalars.count
      case .append(let field, let s) where field == f:
        inserted = s.unicodeScalars.count
      case .replace(let field, _, let new, let gone) where field == f:
        inserted = new.unicodeScalars.count
        removed = gone
      default:
        continue
      }
      var lost = false
      for offset in 0..<inserted {
        let id = AtomID(intent: intent.id, offset: Int32(offset))
        if state[id] == 0 || excused(id, of: k) { continue }  // visible, or removed knowingly
        lost = true
        break
      }
      if !lost {
        // A removal undone: a character it removed is visible again.
        lost = removed.contains { state[$0] == 0 }
      }
      guard lost else { continue }
      let finalWriter = record.fields[Int(f)].writer
      let winner = finalWriter != 0 && finalWriter != intent.id ? log[finalWriter] : nil
      lose(
        intent, f: f, spec: spec, record: record, intents: intents, ending: .textWithout(field: "\(r).\(spec.name)", final: finalString),
        winner: winner)
    }
  }
}
