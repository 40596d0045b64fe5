@_spi(Kernel) import Simulator

/// The policy every preset is: the decisions of `policies.md`, driven by ``PolicySettings``.
public struct StandardPolicy: SyncPolicy, ExpressibleByStringLiteral {
  /// How reports name the policy: the preset's name, or a spec's canonical spelling.
  public var name: String
  /// The axes every decision and mechanic follows.
  public var settings: PolicySettings

  /// A policy called `name` following `settings`, for combinations of axes no spec can name.
  public init(name: String, settings: PolicySettings) {
    self.name = name
    self.settings = settings
  }

  /// A preset by name, e.g. `StandardPolicy(preset: "crdt")`.
  public init?(preset: String) {
    guard let p = PolicyPreset.named(preset) else { return nil }
    self.init(name: p.name, settings: p.settings)
  }

  /// A parsed spec (`field-lww-hlc delete=hard`).
  public init(spec: PolicySpec) {
    self.init(name: spec.description, settings: spec.settings)
  }

  /// A preset or spec written in code: `let base: StandardPolicy = "field-lww-hlc"`. A literal
  /// that does not parse is a programming error and stops the program with the parse error;
  /// parse text from elsewhere with ``PolicySpec/parse(_:)``.
  public init(stringLiteral text: String) {
    switch PolicySpec.parse(text) {
    case .success(let spec): self.init(spec: spec)
    case .failure(let error): preconditionFailure("\"\(text)\" is not a policy: \(error.message)")
    }
  }

  /// Whether stamp `a` beats stamp `b` under the `winner` axis. `arrival`: the later arrival,
  /// i.e. the incoming write, always wins.
  @inlinable
  public func beats(_ a: Stamp, _ b: Stamp) -> Bool {
    switch settings.winner {
    case .arrival: true
    case .clock: b.clockOrder(a)
    case .hlc: b.hlcOrder(a)
    }
  }

  @inlinable
  func _newer(_ a: Stamp, _ b: Stamp) -> Stamp {
    b.hlcOrder(a) ? a : b
  }

  // MARK: Server

  /// Decides a save by the axes: a deleted record refuses it (unless the delete was `hard`, or
  /// `update-wins` and the save carries writes the deleter had not seen); `if-unchanged` stores only
  /// a save based on the current change tag; otherwise the `save` keys are merged by `granularity`
  /// and `winner`.
  public func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    var incoming = write.record
    incoming.deletedBy = 0
    incoming.deleteStamp = .origin
    guard let current else { return .store(incoming) }
    if current.isDeleted {
      // A hard delete leaves only a marker in the change log: a save recreates the record.
      if settings.delete == .hard { return .store(incoming) }
      switch settings.conflict {
      case .deleteWins:
        return .refuseDeleted
      case .updateWins:
        // A write the deleting device had not seen beats the delete (add-wins); one it had
        // seen, e.g. a retried save, does not. The tombstone keeps what the deleter had seen.
        guard write.record.versions.hasUnseenWrites(comparedTo: current.versions) else { return .refuseDeleted }
        // The record comes back as the tombstone's fields with the write saved over them, as a
        // save over the live record would be: a stale copy's other fields do not win.
        var alive = current
        alive.deletedBy = 0
        alive.deleteStamp = .origin
        return serverSave(write, current: alive, context: context)
      }
    }
    if settings.save == .ifUnchanged {
      // The device merged with the server's version before saving again.
      return write.baseTag == current.changeTag ? .store(incoming) : .conflict
    }
    let keys: FieldMask = settings.save == .allKeys ? .all : write.changed
    var result = current
    switch settings.granularity {
    case .record:
      guard beats(write.record.stamp, current.stamp) else { return .store(current) }
      for i in incoming.fields.indices where keys.contains(field: i) {
        result.fields[i] = _merge(incoming: incoming.fields[i], over: current.fields[i], incomingWins: true)
      }
      result.stamp = incoming.stamp
      result.versions.formUnion(incoming.versions)
      return .store(result)
    case .field:
      var tookAny = false
      for i in incoming.fields.indices where keys.contains(field: i) {
        let wins = beats(incoming.fields[i].stamp, current.fields[i].stamp)
        result.fields[i] = _merge(incoming: incoming.fields[i], over: current.fields[i], incomingWins: wins)
        if !tookAny && (wins || settings.text == .merge) { tookAny = Self._differs(result.fields[i], current.fields[i]) }
      }
      // Every field lost: the server's version stands as it was (no new tag, no notification).
      if !tookAny && !incoming.versions.hasUnseenWrites(comparedTo: current.versions) {
        return .store(current)
      }
      result.stamp = _newer(incoming.stamp, current.stamp)
    }
    result.versions.formUnion(incoming.versions)
    return .store(result)
  }

  /// Keeps the record (returns it) only under `update-wins` when the live version has writes the
  /// deleting device had not seen; otherwise returns nil and the delete goes ahead.
  public func serverDelete(_ write: RecordWrite, current: RecordState, context: MergeContext) -> RecordState? {
    // update-wins: a live version with writes newer than the delete survives it.
    if settings.conflict == .updateWins, current.versions.hasUnseenWrites(comparedTo: write.record.versions) { return current }
    return nil
  }

  /// `a != b`, cheapest parts first: a write that changes a field almost always changes its
  /// stamp, so the value (possibly a long text) is compared only when the stamps agree.
  @inline(__always)
  static func _differs(_ a: FieldValue, _ b: FieldValue) -> Bool {
    a.stamp != b.stamp || a.writer != b.writer || a.value != b.value
  }

  /// One field: the winner's value, or for text under `text=merge` both versions merged.
  func _merge(incoming: FieldValue, over current: FieldValue, incomingWins: Bool) -> FieldValue {
    if settings.text == .merge, case .text(let a) = incoming.value, case .text(let b) = current.value {
      let winner = incomingWins ? incoming : current
      return FieldValue(value: .text(a.merged(with: b)), writer: winner.writer, stamp: _newer(incoming.stamp, current.stamp))
    }
    return incomingWins ? incoming : current
  }

  // MARK: Device

  /// Takes the server's version, except that fields with pending local changes keep their local
  /// values (every field under `record` granularity or `all-keys`), and a pending delete or a
  /// pending save over a deletion stays local until the server decides; `text=merge` merges text.
  public func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    guard let pending, let local else { return remote }
    if local.isDeleted { return local }  // a pending delete: the server will decide
    if remote.isDeleted {
      // A pending save: the server will decide. The copy has seen the delete's writes (a delete
      // made from it later must not lose to them).
      var kept = local
      kept.versions.formUnion(remote.versions)
      return kept
    }
    // Local changes not yet acknowledged stay; everything else comes from the server.
    if settings.granularity == .record || settings.save == .allKeys {
      var kept = local
      kept.changeTag = remote.changeTag
      kept.versions.formUnion(remote.versions)
      if settings.text == .merge {
        for i in kept.fields.indices { kept.fields[i] = _merge(incoming: local.fields[i], over: remote.fields[i], incomingWins: true) }
      }
      return kept
    }
    var result = remote
    for i in local.fields.indices where pending.contains(field: i) {
      result.fields[i] = _merge(incoming: local.fields[i], over: remote.fields[i], incomingWins: true)
    }
    result.stamp = _newer(local.stamp, remote.stamp)
    result.versions.formUnion(local.versions)
    return result
  }

  /// Merges an `if-unchanged` conflict field by field against the ancestor: a field only this
  /// device changed keeps its value, one both changed goes to the `winner` (merged under
  /// `text=merge`), every other field comes from the server.
  public func resolveConflict(client: RecordState, server: RecordState, ancestor: RecordState?, context: MergeContext) -> RecordState {
    var result = server
    for i in client.fields.indices {
      let mine = client.fields[i]
      let theirs = server.fields[i]
      let base = ancestor?.fields[i]
      let iChanged = base.map { $0 != mine } ?? true
      let theyChanged = base.map { $0 != theirs } ?? true
      if iChanged && !theyChanged {
        result.fields[i] = mine
      } else if iChanged && theyChanged {
        result.fields[i] = _merge(incoming: mine, over: theirs, incomingWins: beats(mine.stamp, theirs.stamp))
      }
    }
    result.stamp = _newer(client.stamp, server.stamp)
    result.versions.formUnion(client.versions)
    return result
  }
}
