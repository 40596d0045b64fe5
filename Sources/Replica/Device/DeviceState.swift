@_spi(Kernel) import Simulator

/// One device: a local store that is the source of truth, an outbox, a change token, a clock
/// with a hybrid logical clock, an app lifecycle and a sync engine. A pure state machine: the
/// world hands it inputs and carries out the effects it returns.
package struct DeviceState: Sendable {
  package let config: DeviceConfig
  package var clock: DeviceClock
  package internal(set) var hlc = HybridLogicalClock()
  /// Local records by key: live ones, and locally deleted ones whose delete is still pending.
  package internal(set) var store = RecordTable()
  /// The last server version of each record (the ancestor of an `if-unchanged` conflict; kept
  /// only under that save policy).
  var ancestors = RecordTable()
  package internal(set) var outbox = Outbox()
  /// The durable change token; nil until the first complete fetch (or after "token expired").
  package internal(set) var savedToken: Int64?
  /// With sharing: the shared database's change token (nil: from the start).
  package internal(set) var sharedToken: Int64?
  /// Whether the fetch (or the apply) under way is of the shared database.
  var fetchingShared = false
  /// Whether the shared database was fetched since the app launched (memory: a kill forgets it).
  var sharedFetchedSinceLaunch = false
  /// The shared records whose access ended, and those the account may only read, from the
  /// shared page being applied.
  var revokedPending: [RecordKey] = []
  var readOnlyPending: [RecordKey] = []
  var gonePending: [RecordKey] = []
  /// The records that came from the shared database (another account's, shared with this one):
  /// a refetch of the private database does not return them and must not delete them.
  package internal(set) var sharedKeys = KeyBits()
  package internal(set) var lifecycle: Lifecycle = .foreground
  package internal(set) var online = true
  /// Bumped whenever in-flight work is cut off (kill, suspension, going offline): requests
  /// sent in an older session never reach the server.
  package internal(set) var session: UInt32 = 0

  enum Phase: Hashable, Sendable {
    case idle
    case pushing(requestID: UInt64, sent: [OutboxEntry])
    /// `refetch`: part of a nil-token fetch of everything, judged as a whole at its last page.
    case fetching(requestID: UInt64, refetch: Bool)
    case applying(records: [RecordState], newToken: Int64, moreComing: Bool, refetch: Bool)
  }
  var phase: Phase = .idle
  var syncRequested = false
  var attempt = 0
  var nextRequestID: UInt64 = 1
  var generations = [UInt32](repeating: 0, count: TimerKind.allCases.count)
  /// During a nil-token refetch: the keys the server returned so far.
  var refetchSeen = KeyBits()
  /// After a CloudKit error: no request is sent before this time (the error's retry-after, or
  /// the engine's backoff). Memory: a kill forgets it.
  package internal(set) var holdUntil: VirtualTime = .zero
  /// Whether the hold stops fetches too (throttling and a busy zone refuse every request; a full
  /// storage or a bad record only stops the uploads).
  var holdsFetches = false
  /// After `limitExceeded` with `split=on`: the smaller batch size the engine now uses.
  package internal(set) var batchLimit: Int?
  /// How many zone deletions the engine has reacted to (durable; sent with every request).
  package internal(set) var zoneEpoch: Int32 = 0
  /// A save failed with zoneNotFound, userDeletedZone or referenceViolation: fetch first, to
  /// learn why.
  var checkZone = false
  /// Records never saved as far as this device knows whose save was answered with
  /// serverResponseLost: they may be in the zone, so a zone deletion takes them too. (A request
  /// cut off in flight leaves the same doubt; the engine cannot see it, and the fuzz swarm does
  /// not combine the two.) Durable, like the outbox.
  package internal(set) var maybeInZone: Set<RecordKey> = []
  /// Records whose pending save under if-unchanged must be merged with a version a fetch brings
  /// (three-way, against the last version seen) rather than keep it out: merged after a
  /// conflict and not saved yet, or waiting out a CloudKit error.
  var remerge = KeyBits()
  /// The iCloud account the engine syncs with (nil: signed out: nothing syncs).
  package internal(set) var account: Int32?
  /// With `account=keep`: each signed-out account's local data, set aside until it signs in.
  var stashes = Stashes()
  /// A signed-out account's local data.
  struct Stash: Sendable {
    var store: RecordTable
    var ancestors: RecordTable
    var outbox: Outbox
    var savedToken: Int64?
    var zoneEpoch: Int32
  }
  /// The CloudKit error the engine is waiting out, if its last request failed with one.
  package internal(set) var waitingOn: Wait?
  /// The app version the device runs (durable; `upgrade` raises it).
  package internal(set) var appVersion: Int32
  /// With references in the schema: records a fetch changed here, with their type, whose
  /// delete rules the world runs next (`references=propagate`); taken after each input.
  package internal(set) var ruleChecks: [(key: RecordKey, type: Int32)] = []
  /// Per record with a pending save that moved it away from a parent (a `ref` field of a
  /// record the server has changed from one record to another, or cleared): the records it
  /// referred to before, until a save of it is acknowledged. Under `order=parents-first` their
  /// deletes wait for that save (``holdingDeletes(_:)``). Kept with the outbox.
  package internal(set) var movedFrom: [RecordKey: [RecordKey]] = [:]
  /// Records of a unique type that a fetch just brought onto the device, for the world to
  /// check for duplicates (`unique=dedupe`), in the order they arrived.
  package internal(set) var dedupeChecks: [RecordKey] = []
  /// With references in the schema: the records this device knows are deleted (its own deletes
  /// and fetched ones), with the delete intent, so that a child fetched later that refers to
  /// one meets its delete rule. Durable (the store's history).
  package internal(set) var knownDeletes = KeyMap<IntentID>()

  /// What a device is waiting on after a CloudKit error.
  package struct Wait: Hashable, Sendable {
    package var error: CloudKitError
    /// The retry-after the error carried.
    package var retryAfter: SimDuration?
    /// When the first error of this wait came.
    package var since: VirtualTime
    /// Failed attempts in a row.
    package var attempts: Int
  }
  var rng: SimRandom
  /// The asset files on this device, by content name (lookups only: never iterated into a
  /// trace, a report or a hash but by ``purgeStaging()``, which only deletes).
  package internal(set) var files: [String: AssetFile] = [:]
  /// Files of assets the app changed in place, and when (`change-file`).
  var fileChanges: [String: VirtualTime] = [:]
  /// Upload files the engine deleted before their save was confirmed (`asset-file=delete-after-send`).
  var uploadCopiesGone: Set<String> = []
  /// Why files went from this device, by content name, and when (the oracle's words).
  package internal(set) var lostFiles: [String: (why: FileLoss, at: VirtualTime)] = [:]
  /// When the latest push request was sent (an upload reads its files while it travels).
  package internal(set) var pushSentAt: VirtualTime = .zero

  package init(config: DeviceConfig, clock: DeviceClock, seed: UInt64) {
    self.config = config
    self.clock = clock
    self.rng = SimRandom(seed: seed, stream: "device", index: UInt64(config.index))
    self.account = config.account
    self.appVersion = config.appVersion
  }

  /// The records the user sees, in key order.
  @inlinable
  package var visibleRecords: [RecordState] { store.liveValues }

  /// (Inlinable, so that a caller in another module reads it in place, without copying the
  /// whole device out of the world's array to call it.)
  @inlinable
  package func visibleRecord(_ key: RecordKey) -> RecordState? { store.live(key) }

  /// Whether the user sees the record (``visibleRecord(_:)`` is not nil), without copying it.
  @inlinable
  package func shows(_ key: RecordKey) -> Bool { store.isLive(key) }

  /// Whether the device has nothing left to do: nothing sendable, no sync running.
  package var isIdle: Bool { phase == .idle && !outbox.hasSendable }

  var canRun: Bool {
    guard online, account != nil else { return false }
    switch lifecycle {
    case .foreground, .background: return true
    case .suspended, .killed: return false
    }
  }

  // MARK: Inputs

  /// Handles one input, appending effects.
  package mutating func handle(_ input: DeviceInput, in env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let now = env.now
    switch input {
    case .syncNow:
      foreground()
      startSync(env: env, effects: &effects)
    case .sendNow:
      foreground()
      if outbox.hasSendable { startSync(env: env, effects: &effects) }
    case .fetchNow:
      foreground()
      if canRun, phase == .idle, env.now >= holdUntil || !holdsFetches { sendFetch(token: savedToken, effects: &effects) }
    case .background(let budget):
      // A killed or suspended app is launched into the background; a foreground one moves there.
      lifecycle = .background(deadline: now + budget)
      effects.append(.timer(.budget, after: budget, generation: _bump(.budget)))
      startSync(env: env, effects: &effects)
    case .kill:
      abort(cause: "app killed", env: env, effects: &effects)
      lifecycle = .killed
      sharedFetchedSinceLaunch = false
      syncRequested = false
      refetchSeen = []
      holdUntil = .zero
      batchLimit = nil
      for k in TimerKind.allCases { _ = _bump(k) }
      if env.settings.outbox == .memory, !outbox.isEmpty {
        let lost = outbox.removeAll().map(\.key)
        effects.append(.fact(.outboxLost(lost)))
      }
    case .connectivity(let isOnline):
      if online && !isOnline {
        online = false
        abort(cause: "went offline", env: env, effects: &effects)
      } else if !online && isOnline {
        online = true
        if syncRequested || outbox.hasSendable { startSync(env: env, effects: &effects) }
      }
    case .clockJump(let by):
      clock.jump(by: by)
    case .accountChanged(let new):
      changeAccount(to: new, env: env, effects: &effects)
    case .upgraded(let version):
      // Updating an app terminates it; the new version starts at the next launch.
      handle(.kill, in: env, effects: &effects)
      appVersion = version
    case .deletedZone(let epoch):
      foreground()
      abort(cause: "the app deleted its zone", env: env, effects: &effects)
      var wiped: [RecordKey] = []
      var shared: [OutboxEntry] = []
      for key in store.keys {
        // (A shared record is in its owner's zone: it stays, with what is pending of it.)
        if config.sharing, sharedKeys.contains(key) {
          if let e = outbox.entry(for: key) { shared.append(e) }
          continue
        }
        if store.isLive(key) { wiped.append(key) }
        setLocal(nil, for: key, effects: &effects)
      }
      _ = outbox.removeAll()
      for e in shared {
        if e.isDelete { outbox.delete(e.key) } else if !e.failed { outbox.save(e.key, fields: e.changed) }
      }
      ancestors = RecordTable()
      savedToken = nil
      checkZone = false
      maybeInZone = []
      zoneEpoch = epoch
      effects.append(.fact(.zoneGone(.deleted, wiped: wiped, reuploaded: [])))
    case .message(let message):
      receive(message, env: env, effects: &effects)
    case .timer(let kind, let generation):
      guard generations[kind.rawValue] == generation else { return }
      switch kind {
      case .autosync, .retry:
        startSync(env: env, effects: &effects)
      case .timeout:
        switch phase {
        case .pushing, .fetching:
          abort(cause: "request timed out", env: env, effects: &effects)
          scheduleRetry(effects: &effects)
        default: break
        }
      case .apply:
        applyFetched(env: env, effects: &effects)
      case .budget:
        if case .background = lifecycle {
          abort(cause: "background budget expired", env: env, effects: &effects)
          lifecycle = .suspended
        }
      case .stateUpdate:
        break
      }
    }
  }

  /// Brings the app to the foreground (relaunching it if it was killed).
  package mutating func foreground() {
    if lifecycle != .foreground {
      lifecycle = .foreground
      _ = _bump(.budget)
    }
  }

  mutating func _bump(_ kind: TimerKind) -> UInt32 {
    generations[kind.rawValue] &+= 1
    return generations[kind.rawValue]
  }

  /// Cuts off whatever is in flight. `mark-first` entries already cleared from the outbox are
  /// gone for good; fetched records not yet applied are dropped.
  mutating func abort(cause: String, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    switch phase {
    case .idle:
      return
    case .pushing(_, let sent):
      if env.settings.unit == .markFirst {
        effects.append(.fact(.batchAbandoned(sent.map(\.key), cause: cause)))
      }
    case .fetching:
      break
    case .applying(let records, _, _, _):
      effects.append(.fact(.fetchDropped(count: records.count, cause: cause)))
    }
    phase = .idle
    fetchingShared = false
    revokedPending = []
    readOnlyPending = []
    gonePending = []
    session &+= 1
    syncRequested = true
    _ = _bump(.timeout)
    _ = _bump(.apply)
  }

  mutating func scheduleRetry(effects: inout [DeviceEffect]) {
    let base = config.backoff * Int64(1 << min(attempt, 16))
    let capped = min(base, config.maxBackoff)
    let jitter = SimDuration(nanoseconds: rng.int(in: 0...(capped.nanoseconds / 5)))
    attempt += 1
    effects.append(.timer(.retry, after: capped + jitter, generation: _bump(.retry)))
  }

  // MARK: Sync engine

  /// Push pending changes in batches, then fetch changes since the token.
  mutating func startSync(env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard canRun, phase == .idle, env.now >= holdUntil || !holdsFetches else {
      syncRequested = true
      return
    }
    syncRequested = false
    if outbox.hasSendable && !checkZone && env.now >= holdUntil {
      sendPush(env: env, effects: &effects)
    } else {
      sendFetch(token: savedToken, effects: &effects)
    }
  }

  mutating func sendPush(env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let limit = min(env.settings.batch, batchLimit ?? .max)
    let batch =
      env.settings.order == .parentsFirst && env.hasReferences
      ? parentsFirst(limit: limit, rules: env.context.rules) : outbox.sendable(limit: limit)
    var writes: [RecordWrite] = []
    var sent: [OutboxEntry] = []
    writes.reserveCapacity(batch.count)
    sent.reserveCapacity(batch.count)
    for entry in batch {
      guard let record = store[entry.key] else {
        outbox.remove(entry.key)
        continue
      }
      let base = knownTag(entry.key)
      writes.append(RecordWrite(record: record, changed: entry.sent, isDelete: entry.isDelete, baseTag: base))
      sent.append(entry)
    }
    guard !writes.isEmpty else {
      sendFetch(token: savedToken, effects: &effects)
      return
    }
    if env.settings.unit == .markFirst {
      for e in sent { outbox.remove(e.key) }
    }
    let id = nextRequestID
    nextRequestID += 1
    phase = .pushing(requestID: id, sent: sent)
    pushSentAt = env.now
    effects.append(.send(.push(requestID: id, writes: writes, zone: zoneEpoch)))
    effects.append(.timer(.timeout, after: config.requestTimeout, generation: _bump(.timeout)))
  }

  /// The first `limit` sendable entries, a record's pending parents (the records its `ref`
  /// fields name whose saves are also waiting) placed before it: a parent goes in the same
  /// request as its child or an earlier one, never a later one.
  func parentsFirst(limit: Int, rules: SchemaRules) -> [OutboxEntry] {
    // Usually no pending record refers to a pending save queued after it: the queue as it is.
    var reordering = false
    let queue = outbox.entries
    search: for (i, e) in queue.enumerated() where !e.failed && !e.isDelete {
      guard let type = store.type(of: e.key) else { continue }
      for (field, _) in rules.refFields[Int(type)] {
        guard let parent = store.reference(e.key, field: Int(field)) else { continue }
        if let j = queue.firstIndex(where: { $0.key == parent }), j > i, !queue[j].isDelete, !queue[j].failed {
          reordering = true
          break search
        }
      }
    }
    guard reordering else { return holdingDeletes(outbox.sendable(limit: limit)) }
    let entries = queue.filter { !$0.failed }
    var index: [RecordKey: Int] = [:]
    for (i, e) in entries.enumerated() where !e.isDelete { index[e.key] = i }
    var placed = [Bool](repeating: false, count: entries.count)
    var out: [OutboxEntry] = []
    func place(_ i: Int, depth: Int) {
      guard !placed[i], out.count < limit else { return }
      placed[i] = true
      let e = entries[i]
      if !e.isDelete, depth < 64, let r = store[e.key], !r.isDeleted {
        for (field, _) in rules.refFields[Int(r.type)] {
          if case .ref(let parent) = r.fields[Int(field)].value, let p = index[parent] { place(p, depth: depth + 1) }
        }
      }
      if out.count < limit { out.append(e) } else { placed[i] = false }
    }
    for i in entries.indices where out.count < limit { place(i, depth: 0) }
    return holdingDeletes(out)
  }

  /// `batch` without the deletes that must wait: a record's delete waits while a save queued
  /// before it moves a child out of it (``movedFrom``). The save goes first and the delete in
  /// a later request, once the save is acknowledged, so that no device cascades the delete onto
  /// a child whose move the server does not have yet.
  func holdingDeletes(_ batch: [OutboxEntry]) -> [OutboxEntry] {
    guard !movedFrom.isEmpty, batch.contains(where: \.isDelete) else { return batch }
    let queue = outbox.entries
    var held: [RecordKey] = []
    for (j, e) in queue.enumerated() where e.isDelete && !e.failed {
      if queue[..<j].contains(where: { !$0.isDelete && !$0.failed && movedFrom[$0.key]?.contains(e.key) == true }) { held.append(e.key) }
    }
    return held.isEmpty ? batch : batch.filter { !held.contains($0.key) }
  }

  /// Fetches from `token`; a nil token starts a refetch of everything. `refetch` continues one
  /// across pages.
  mutating func sendFetch(token: Int64?, refetch: Bool = false, effects: inout [DeviceEffect]) {
    let id = nextRequestID
    nextRequestID += 1
    if token == nil { refetchSeen = [] }
    phase = .fetching(requestID: id, refetch: refetch || token == nil)
    effects.append(.send(.fetch(requestID: id, token: token, zone: zoneEpoch)))
    effects.append(.timer(.timeout, after: config.requestTimeout, generation: _bump(.timeout)))
  }

  /// Fetches the shared database from `token` (after the private database's last page).
  mutating func sendSharedFetch(token: Int64?, effects: inout [DeviceEffect]) {
    let id = nextRequestID
    nextRequestID += 1
    fetchingShared = true
    phase = .fetching(requestID: id, refetch: false)
    effects.append(.send(.fetchShared(requestID: id, token: token)))
    effects.append(.timer(.timeout, after: config.requestTimeout, generation: _bump(.timeout)))
  }

  mutating func receive(_ message: Message, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    switch message {
    case .notify:
      startSync(env: env, effects: &effects)
    case .pushReply(let id, let results):
      guard case .pushing(id, let sent) = phase else { return }
      _ = _bump(.timeout)
      var failures = FailureSummary()
      if env.hasAssets, env.settings.assetFile == .deleteAfterSend {
        for (entry, result) in zip(sent, results) where result.isFailure { dropUploadCopies(of: entry, env: env) }
      }
      // `limitExceeded` for some writes of a request and not others: those records are over
      // CloudKit's per-record limits, which no split helps. (Read once a reply, and only when
      // the reply has one.)
      lazy var partlyLimited = results.contains { if case .failed(.limitExceeded, _) = $0 { false } else { true } }
      for (entry, result) in zip(sent, results) {
        if case .failed(let error, let retryAfter) = result {
          let alone = error == .limitExceeded && partlyLimited
          failed(entry, error, retryAfter: retryAfter, batchSize: alone ? 1 : sent.count, env: env, into: &failures)
        } else {
          pushResult(entry, result, env: env, effects: &effects)
        }
      }
      phase = .idle
      // One fact per error and whether the user was told, in the order they came.
      for g in failures.gaveUp { effects.append(.fact(.gaveUp(g.keys, error: g.error, told: g.told))) }
      for r in failures.refused { effects.append(.fact(.permissionRefused(r.keys, reverted: r.reverted))) }
      for key in failures.unsaved where outbox.entry(for: key) == nil { setLocal(nil, for: key, effects: &effects) }
      if !failures.lostZone.isEmpty {
        for key in failures.lostZone { setLocal(nil, for: key, effects: &effects) }
        effects.append(.fact(.accessEnded(removed: failures.lostZone, kept: [])))
      }
      if let wait = failures.wait {
        waitOut(wait.error, retryAfter: wait.retryAfter, env: env, effects: &effects)
        return
      }
      attempt = 0
      waitingOn = nil
      if outbox.hasSendable { sendPush(env: env, effects: &effects) } else { sendFetch(token: savedToken, effects: &effects) }
    case .fetchReply(let id, let reply):
      guard case .fetching(id, let refetch) = phase else { return }
      _ = _bump(.timeout)
      switch reply {
      case .failed(let error, let retryAfter):
        phase = .idle
        waitOut(error, retryAfter: retryAfter, env: env, effects: &effects)
      case .zoneDeleted(let reason, let epoch):
        phase = .idle
        zoneGone(reason, epoch: epoch, env: env, effects: &effects)
        if outbox.hasSendable { sendPush(env: env, effects: &effects) } else { sendFetch(token: nil, effects: &effects) }
      case .tokenExpired:
        savedToken = nil
        phase = .idle
        sendFetch(token: nil, effects: &effects)
      case .changes(let records, let newToken, let more):
        checkZone = false
        if env.settings.token == .beforeApply, !(refetch && more) { savedToken = newToken }
        phase = .applying(records: records, newToken: newToken, moreComing: more, refetch: refetch)
        let delay = config.applyDelay + SimDuration.microseconds(500) * Int64(records.count)
        effects.append(.timer(.apply, after: delay, generation: _bump(.apply)))
      case .shared(let records, let revoked, let readOnly, let gone, let newToken, let more):
        if env.settings.token == .beforeApply { sharedToken = newToken }
        revokedPending = revoked
        readOnlyPending = readOnly
        gonePending = gone
        phase = .applying(records: records, newToken: newToken, moreComing: more, refetch: false)
        let delay = config.applyDelay + SimDuration.microseconds(500) * Int64(records.count + revoked.count)
        effects.append(.timer(.apply, after: delay, generation: _bump(.apply)))
      }
    case .push, .fetch, .fetchShared, .zones, .zonesReply:
      return
    }
  }

  mutating func pushResult(_ entry: OutboxEntry, _ result: WriteResult, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let key = entry.key
    switch result {
    case .saved(let server):
      if outbox.remove(key, ifAt: entry.generation), !movedFrom.isEmpty { movedFrom[key] = nil }
      if !maybeInZone.isEmpty { maybeInZone.remove(key) }
      if !remerge.isEmpty, outbox.entry(for: key) == nil { remerge.remove(key) }
      if env.settings.save == .ifUnchanged { ancestors[key] = server }
      adopt(server, env: env, effects: &effects)
    case .conflict(let server):
      // The server's record that comes with `serverRecordChanged` has no asset data (Apple,
      // `CKAsset.fileURL`). Saving only the keys it changed, the engine leaves the server its
      // assets (merged in as the server has them); copying every field of that record
      // (`asset-merge=all-fields`), it saves assets with no data.
      let received = env.hasAssets ? Self.withoutAssetData(server, env.context.rules) : server
      take(received, effects: &effects)
      guard let local = store[key], !local.isDeleted else { return }
      let server = env.hasAssets && env.settings.assetMerge == .allFields ? received : server
      var merged = env.policy.resolveConflict(client: local, server: server, ancestor: ancestors[key], context: env.context)
      merged.changeTag = server.changeTag
      ancestors[key] = server
      store[key] = merged
      outbox.markAllChanged(key)
      if env.hasAssets, env.settings.assetMerge == .changedKeys {
        // The assets the merge took from the server are not changed keys: not uploaded again.
        var same: FieldMask = []
        for f in env.context.rules.assetFields[Int(merged.type)] where merged.fields[Int(f)].value == server.fields[Int(f)].value {
          same.insert(.field(Int(f)))
        }
        if !same.isEmpty { outbox.leaveUnchanged(key, same) }
      }
      // Until the merged record is saved, a newer server version fetched meanwhile is merged
      // in the same way, not kept out by the pending save.
      remerge.insert(key)
      // The merge may have taken in a reference to a record this device knows is deleted.
      if env.hasReferences, !knownDeletes.isEmpty, !env.context.rules.refFields[Int(merged.type)].isEmpty {
        ruleChecks.append((key, merged.type))
      }
    case .refusedDeleted(let tombstone) where !tombstone.isDeleted:
      // The record was deleted and created again: what the server has is the later incarnation.
      adopt(tombstone, env: env, effects: &effects)
    case .refusedDeleted(let tombstone):
      take(tombstone, effects: &effects)
      outbox.remove(key)
      ancestors[key] = nil
      setLocal(nil, for: key, effects: &effects)
      if env.hasReferences {
        // Deleted elsewhere: its delete rules run here now.
        knownDeletes[key] = tombstone.deletedBy
        ruleChecks.append((key, tombstone.type))
      }
    case .deleted:
      if outbox.remove(key, ifAt: entry.generation) || outbox.entry(for: key) == nil {
        if store.isDeleted(key) { store[key] = nil }
        ancestors[key] = nil
      }
    case .rejected(let typeName):
      outbox.markFailed(key)
      effects.append(.fact(.rejected(key, typeName: typeName)))
    case .failed:
      break  // handled by `failed(_:_:retryAfter:batchSize:env:into:)`
    }
  }

  mutating func applyFetched(env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard case .applying(let records, let newToken, let more, let refetch) = phase else { return }
    if fetchingShared {
      applyShared(records, newToken: newToken, moreComing: more, env: env, effects: &effects)
      return
    }
    // Uploads waiting out an error: under if-unchanged, what this fetch brings is merged with
    // every pending record (three-way), not overwritten by it when they are sent.
    if waitingOn != nil, env.settings.save == .ifUnchanged {
      for e in outbox.entries where !e.isDelete && store.isLive(e.key) { remerge.insert(e.key) }
    }
    if env.hasReferences, env.settings.references == .eager, records.contains(where: \.isDeleted), records.contains(where: { !$0.isDeleted }) {
      // The batch's deletions first; the world runs the delete rules on them before the rest
      // is applied (at once, as the next step of the same apply).
      for remote in records where remote.isDeleted {
        if refetch { refetchSeen.insert(remote.key) }
        if env.settings.save == .ifUnchanged, remerge.isEmpty || !remerge.contains(remote.key) { ancestors[remote.key] = nil }
        adopt(remote, env: env, effects: &effects)
      }
      phase = .applying(records: records.filter { !$0.isDeleted }, newToken: newToken, moreComing: more, refetch: refetch)
      effects.append(.timer(.apply, after: .zero, generation: _bump(.apply)))
      return
    }
    if records.count > 2, config.warmsBatches { _keepLoads(store.warm(records)) }
    for remote in records {
      if refetch { refetchSeen.insert(remote.key) }
      // Only `if-unchanged` needs the ancestor of a conflict; keeping copies costs.
      // (A record merged after a conflict is merged again against its old ancestor first.)
      if env.settings.save == .ifUnchanged, remerge.isEmpty || !remerge.contains(remote.key) {
        ancestors[remote.key] = remote.isDeleted ? nil : remote
      }
      adopt(remote, env: env, effects: &effects)
    }
    // A refetch is one unit: its token is kept only once every page is in.
    if env.settings.token == .afterApply, !(refetch && more) { savedToken = newToken }
    phase = .idle
    if waitingOn != nil, !outbox.hasSendable { waitingOn = nil }
    if more {
      sendFetch(token: newToken, refetch: refetch, effects: &effects)
      return
    }
    if refetch {
      if env.settings.refetch == .diff {
        // Rows the full refetch did not return are gone from the server: delete them,
        // except those with changes still pending.
        for key in store.keys where !refetchSeen.contains(key) && !sharedKeys.contains(key) {
          guard let r = store[key], r.changeTag != 0, outbox.entry(for: key) == nil else { continue }
          setLocal(nil, for: key, effects: &effects)
          if env.hasReferences, !r.isDeleted {
            // Gone from the server: its delete rules run here.
            knownDeletes[key] = knownDeletes[key] ?? Self.unknownDelete
            ruleChecks.append((key, r.type))
          }
        }
      }
      refetchSeen = []
    }
    // With sharing, the shared database is fetched next (`shared-fetch=at-launch`: only in the
    // first sync since the app launched).
    if config.sharing, env.settings.sharedFetch == .always || !sharedFetchedSinceLaunch {
      sharedFetchedSinceLaunch = true
      sendSharedFetch(token: sharedToken, effects: &effects)
      return
    }
    syncDone(env: env, effects: &effects)
  }

  /// Applies a page of the shared database: the records as a private fetch's, then the records
  /// whose access ended as the `access-ended` axis says.
  mutating func applyShared(_ records: [RecordState], newToken: Int64, moreComing more: Bool, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    for remote in records {
      sharedKeys.insert(remote.key)
      // `fetched-read-only=block`: the app's permission checks stop the engine's own writes to a
      // record it has and may only read (sqlite-data #129).
      if env.settings.fetchedReadOnly == .block, store[remote.key] != nil, readOnlyPending.contains(remote.key) { continue }
      // `own-fetched=skip`: a record this device wrote last is taken for one it has (SyncKit #128).
      if env.settings.ownFetched == .skip, remote.stamp.device == config.rank { continue }
      if env.settings.save == .ifUnchanged, remerge.isEmpty || !remerge.contains(remote.key) {
        ancestors[remote.key] = remote.isDeleted ? nil : remote
      }
      adopt(remote, env: env, effects: &effects)
      // `fetched-shared=echo`: the fetched version is taken for a local edit and uploaded again
      // (SyncKit #164) — of a record the account may change (a read-only one would be refused
      // and fetched again for ever).
      if env.settings.fetchedShared == .echo, store.isLive(remote.key), outbox.entry(for: remote.key) == nil,
        !readOnlyPending.contains(remote.key)
      {
        outbox.save(remote.key, fields: .all)
      }
    }
    readOnlyPending = []
    // Records gone from the owner's zone with its deletion: a copy that was saved goes (one made
    // here and not uploaded yet stays, with its pending save).
    for key in gonePending {
      guard let r = store[key], r.changeTag != 0 else { continue }
      outbox.remove(key)
      ancestors[key] = nil
      if !remerge.isEmpty { remerge.remove(key) }
      setLocal(nil, for: key, effects: &effects)
    }
    gonePending = []
    var removed: [RecordKey] = []
    var kept: [RecordKey] = []
    for key in revokedPending where store[key] != nil {
      if env.settings.accessEnded == .keep {
        if store.isLive(key) { kept.append(key) }
        continue
      }
      // (A pending delete goes too: the record is out of reach.)
      removed.append(key)
      // Not a delete: nothing is uploaded, and no delete rule runs.
      outbox.remove(key)
      ancestors[key] = nil
      if !remerge.isEmpty { remerge.remove(key) }
      setLocal(nil, for: key, effects: &effects)
    }
    revokedPending = []
    if !removed.isEmpty || !kept.isEmpty { effects.append(.fact(.accessEnded(removed: removed, kept: kept))) }
    if env.settings.token == .afterApply { sharedToken = newToken }
    phase = .idle
    if waitingOn != nil, !outbox.hasSendable { waitingOn = nil }
    if more {
      sendSharedFetch(token: newToken, effects: &effects)
      return
    }
    fetchingShared = false
    syncDone(env: env, effects: &effects)
  }

  /// The end of a fetch (of the private database, then the shared one).
  mutating func syncDone(env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    // (The backoff of uploads waiting out an error keeps growing.)
    if waitingOn == nil { attempt = 0 }
    // While uploads wait out an error, the retry timer sends them (fetching again at once would
    // spin).
    if (syncRequested || outbox.hasSendable) && env.now >= holdUntil { startSync(env: env, effects: &effects) }
  }

  /// What a push's failed writes ask of the engine, gathered over the batch.
  struct FailureSummary {
    /// Records given up on, grouped by the error and whether the user was told (a permanent
    /// error handled correctly) or not.
    var gaveUp: [(keys: [RecordKey], error: CloudKitError, told: Bool)] = []

    mutating func giveUp(_ key: RecordKey, _ error: CloudKitError, told: Bool) {
      if let i = gaveUp.firstIndex(where: { $0.error == error && $0.told == told }) {
        gaveUp[i].keys.append(key)
      } else {
        gaveUp.append(([key], error, told))
      }
    }
    /// Shared records whose zone is gone (`zoneNotFound`): removed under `access-ended=remove`.
    var lostZone: [RecordKey] = []
    /// Records made here whose first save was refused and taken back: they go.
    var unsaved: [RecordKey] = []
    /// Records whose writes were refused with `permissionFailure`, reverted or not.
    var refused: [(keys: [RecordKey], reverted: Bool)] = []

    mutating func refuse(_ key: RecordKey, reverted: Bool) {
      if refused.isEmpty { refused.append(([key], reverted)) } else { refused[0].keys.append(key) }
    }
    /// The error to wait out before sending again (the longest retry-after wins).
    var wait: (error: CloudKitError, retryAfter: SimDuration?)?

    mutating func waitFor(_ error: CloudKitError, _ retryAfter: SimDuration?) {
      guard let w = wait else {
        wait = (error, retryAfter)
        return
      }
      // A request-wide answer repeats one error: keep the first; prefer the longer retry-after.
      if (retryAfter ?? .zero) > (w.retryAfter ?? .zero) || (w.error == .batchRequestFailed && error != .batchRequestFailed) {
        wait = (error, retryAfter ?? w.retryAfter)
      }
    }
  }

  /// Reacts to a CloudKit error for one write, as the `retry` and `split` axes say.
  mutating func failed(
    _ entry: OutboxEntry, _ error: CloudKitError, retryAfter: SimDuration?, batchSize: Int, env: DeviceEnvironment, into f: inout FailureSummary
  ) {
    let key = entry.key
    // Applied or not: the device cannot tell. (A refusal says nothing of earlier requests.)
    if error == .serverResponseLost, store[key]?.changeTag == 0 { maybeInZone.insert(key) }
    if error == .permissionFailure {
      // The account may not write the record: retrying cannot help.
      outbox.remove(key, ifAt: entry.generation)
      if !remerge.isEmpty { remerge.remove(key) }
      let reverted = env.settings.permissionFailure == .revert
      if reverted {
        // Take the server's record back: fetch the shared database from the start (the copy
        // there replaces the edit, which is no longer pending). A record the server never had
        // (made here in the share) goes.
        ancestors[key] = nil
        sharedToken = nil
        if store[key]?.changeTag == 0 { f.unsaved.append(key) }
      }
      f.refuse(key, reverted: reverted)
      return
    }
    if env.settings.retry == .never || error.reaction == .giveUp {
      let told = error.reaction == .giveUp
      if told { outbox.markFailed(key) } else { outbox.remove(key, ifAt: entry.generation) }
      f.giveUp(key, error, told: told)
      return
    }
    // Under if-unchanged, a version fetched while this save waits is merged with it (three-way,
    // against the last version the device saw), not overwritten by it on the next save.
    if env.settings.save == .ifUnchanged, store.isLive(key) { remerge.insert(key) }
    switch error.reaction {
    case .split where batchSize <= 1:
      // One record over the limits: no split helps (CloudKit: 1 MB a record). Tell the user.
      outbox.markFailed(key)
      f.giveUp(key, error, told: true)
    case .split where env.settings.split == .on:
      // Halve the batch; send again at once (no wait of its own).
      batchLimit = max(1, min(batchLimit ?? .max, batchSize / 2))
    case .reupload where error == .zoneNotFound && config.sharing && sharedKeys.contains(key):
      // A shared zone that is gone: the account lost access (the engine learns it from the
      // shared database; a record made in the share and never uploaded is not there to say so).
      outbox.remove(key, ifAt: entry.generation)
      ancestors[key] = nil
      if env.settings.accessEnded == .remove, store[key] != nil { f.lostZone.append(key) }
      sharedToken = nil
      f.waitFor(error, retryAfter)
    case .reupload where error == .zoneNotFound || error == .userDeletedZone:
      // Fetch first: the zone may be gone for good (purged), or deleted for a reason to react to.
      checkZone = true
      f.waitFor(error, retryAfter)
    case _ where error == .referenceViolation:
      // Fetch first: the record it refers to may still be coming, or be deleted — and then the
      // delete rule, run on the fetched delete, takes this record or clears its reference.
      checkZone = true
      f.waitFor(error, retryAfter)
    case .reupload:
      // The whole record again. (Its change tag stays: it was in the zone, and a zone deletion
      // must take it.)
      if let r = store[key], !r.isDeleted {
        ancestors[key] = nil
        outbox.markReupload(key)
      }
      f.waitFor(error, retryAfter)
    default:
      f.waitFor(error, retryAfter)
    }
  }

  /// Waits out a CloudKit error: no request before the error's retry-after (`retry-after=honour`,
  /// when it carries one), or before the engine's own backoff; then syncs again.
  mutating func waitOut(_ error: CloudKitError, retryAfter: SimDuration?, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let delay: SimDuration
    if let retryAfter, env.settings.retryAfter == .honour {
      delay = retryAfter
    } else {
      let base = config.backoff * Int64(1 << min(attempt, 16))
      let capped = min(base, config.maxBackoff)
      delay = capped + SimDuration(nanoseconds: rng.int(in: 0...(capped.nanoseconds / 5)))
      attempt += 1
    }
    if var w = waitingOn {
      w.error = error
      w.retryAfter = retryAfter
      w.attempts += 1
      waitingOn = w
    } else {
      waitingOn = Wait(error: error, retryAfter: retryAfter, since: env.now, attempts: 1)
    }
    holdUntil = env.now + delay
    holdsFetches = error == .requestRateLimited || error == .serviceUnavailable || error == .zoneBusy
    syncRequested = true
    effects.append(.timer(.retry, after: delay, generation: _bump(.retry)))
  }

  /// Reacts to an account change as the `account` axis says: the old account's data is set
  /// aside, deleted or kept for the next account; the new account's data comes back (`keep`),
  /// and whatever is local is uploaded into it.
  mutating func changeAccount(to new: Int32?, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let old = account
    guard old != new else { return }
    abort(cause: "the iCloud account changed", env: env, effects: &effects)
    holdUntil = .zero
    waitingOn = nil
    batchLimit = nil
    // Setting an account's data aside and bringing it back are no deletion and no reappearance:
    // the records were visible when set aside, so the oracle is not told they left.
    let quiet = env.settings.account == .keep
    func clearLocal() {
      for key in store.keys where store.isLive(key) {
        if quiet { store[key] = nil } else { setLocal(nil, for: key, effects: &effects) }
      }
      store = RecordTable()
      ancestors = RecordTable()
      outbox = Outbox()
      savedToken = nil
      zoneEpoch = 0
      checkZone = false
      maybeInZone = []
      remerge = []
    }
    if let old {
      switch env.settings.account {
      case .keep:
        stashes.setAside(Stash(store: store, ancestors: ancestors, outbox: outbox, savedToken: savedToken, zoneEpoch: zoneEpoch), account: old)
        clearLocal()
      case .wipe:
        let unsent = outbox.entries.filter { !$0.failed }.map(\.key)
        clearLocal()
        if !unsent.isEmpty { effects.append(.fact(.wipedOnAccountChange(unsent))) }
      case .merge:
        break
      }
    }
    account = new
    // The new account's shared database is another: fetched from the start.
    sharedToken = nil
    guard let new else { return }
    // What is local now (made while signed out, or carried over by `merge`) goes to the new
    // account as new records.
    var carried: [RecordKey] = []
    for key in store.keys {
      guard var r = store[key] else { continue }
      if r.isDeleted {
        if r.changeTag != 0 { store[key] = nil }
        continue
      }
      r.changeTag = 0
      store[key] = r
      outbox.save(key, fields: .all)
      carried.append(key)
      if env.settings.save == .ifUnchanged { remerge.insert(key) }
    }
    if !carried.isEmpty || old != nil {
      ancestors = RecordTable()
      savedToken = nil
      zoneEpoch = 0
    }
    if let stash = stashes.takeBack(account: new) {
      for key in stash.store.keys {
        guard let r = stash.store[key], store[key] == nil else { continue }
        if quiet { store[key] = r } else { setLocal(r, for: key, effects: &effects) }
        if let e = stash.outbox.entry(for: key) {
          if e.isDelete { outbox.delete(key) } else if !e.failed { outbox.save(key, fields: e.changed) }
        }
      }
      ancestors = stash.ancestors
      savedToken = carried.isEmpty ? stash.savedToken : nil
      zoneEpoch = stash.zoneEpoch
    }
    syncRequested = true
    startSync(env: env, effects: &effects)
  }

  /// Reacts to the zone's deletion as the `zone-deleted` axis says, and acknowledges it.
  mutating func zoneGone(_ reason: ZoneDeletionReason, epoch: Int32, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let wipe: Bool
    switch env.settings.zoneDeleted {
    case .follow: wipe = reason != .encryptedDataReset
    case .reupload: wipe = false
    case .wipe: wipe = true
    }
    var wiped: [RecordKey] = []
    var reuploaded: [RecordKey] = []
    for key in store.keys {
      guard var r = store[key] else { continue }
      // What was never uploaded was never in the zone: it stays, with its pending change. (A
      // shared record is in its owner's zone, not this account's.)
      guard r.changeTag != 0 || maybeInZone.contains(key) else { continue }
      if config.sharing, sharedKeys.contains(key) { continue }
      if wipe {
        outbox.remove(key)
        setLocal(nil, for: key, effects: &effects)
        wiped.append(key)
        if env.hasReferences {
          // The app deletes what it shows of the zone: its delete rules run on what stays.
          knownDeletes[key] = knownDeletes[key] ?? Self.unknownDelete
          ruleChecks.append((key, r.type))
        }
      } else if r.isDeleted {
        store[key] = nil  // its delete went with the zone
        outbox.remove(key)
      } else {
        r.changeTag = 0
        store[key] = r
        outbox.save(key, fields: .all)
        reuploaded.append(key)
        if env.settings.save == .ifUnchanged { remerge.insert(key) }
      }
    }
    ancestors = RecordTable()
    savedToken = nil
    checkZone = false
    maybeInZone = []
    zoneEpoch = epoch
    effects.append(.fact(.zoneGone(reason, wiped: wiped, reuploaded: reuploaded)))
  }

  /// Folds a server version into the local store through the policy.
  mutating func adopt(_ remote: RecordState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    if env.hasReferences {
      if remote.isDeleted {
        knownDeletes[remote.key] = remote.deletedBy
        if !env.context.rules.referrers[Int(remote.type)].isEmpty { ruleChecks.append((remote.key, remote.type)) }
      } else if !env.context.rules.refFields[Int(remote.type)].isEmpty {
        if env.settings.orphans == .drop, let parent = missingParent(of: remote, rules: env.context.rules) {
          // The app's model requires the parent, which is not here (yet): the version is dropped.
          effects.append(.fact(.orphanDropped(remote.key, parent: parent)))
          return
        }
        if !knownDeletes.isEmpty { ruleChecks.append((remote.key, remote.type)) }
      }
    }
    if env.hasVersions, env.settings.unknownFields == .drop, Int(appVersion) < env.context.rules.latestVersion {
      var remote = remote
      let rules = env.context.rules
      // The app decodes the record into its model, which has no place for what it does not know.
      if env.context.schema.types[Int(remote.type)].since > appVersion {
        effects.append(.fact(.droppedUnknownFields(remote.key, fields: [], version: appVersion)))
        return
      }
      var dropped: [Int32] = []
      for f in remote.fields.indices where !rules.knows(version: Int(appVersion), type: remote.type, field: f) {
        let initial = env.context.schema.types[Int(remote.type)].fields[f].initialValue
        if remote.fields[f].writer != 0 || remote.fields[f].value != initial { dropped.append(Int32(f)) }
        remote.fields[f] = FieldValue(value: initial, writer: 0, stamp: .origin)
      }
      if !dropped.isEmpty { effects.append(.fact(.droppedUnknownFields(remote.key, fields: dropped, version: appVersion))) }
      _adopt(remote, env: env, effects: &effects)
      return
    }
    _adopt(remote, env: env, effects: &effects)
  }

  /// ``adopt(_:env:effects:)`` once the copy is one the device's app version can hold.
  mutating func _adopt(_ remote: RecordState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    take(remote, effects: &effects)
    if env.hasAssets { receiveFiles(of: remote, env: env) }
    let key = remote.key
    if !env.context.recreatedKeys.isEmpty, let local = store[key], local.creator != remote.creator, env.context.isRecreated(key) {
      // Copies of two incarnations of a record created again after a delete.
      ancestors[key] = nil
      // An earlier incarnation's copy: the one here was made after it was deleted.
      guard remote.creator > local.creator else { return }
      // A later one: the copy here, and what is pending of it, is of a record deleted since.
      outbox.remove(key)
      if !remerge.isEmpty { remerge.remove(key) }
      if !movedFrom.isEmpty { movedFrom[key] = nil }
      setLocal(remote.isDeleted ? nil : remote, for: key, effects: &effects)
      return
    }
    if env.dedupes, !remote.isDeleted, !store.isLive(key), env.context.schema.types[Int(remote.type)].uniqueness != nil {
      dedupeChecks.append(key)
    }
    var entry = outbox.entry(for: key)
    if entry?.reupload == true, !remote.isDeleted {
      // The server has the record after all: only this device's own changes are still its own.
      outbox.clearReupload(key)
      entry?.reupload = false
    }
    let pending = entry.map { $0.isDelete ? FieldMask.all : $0.changed }
    if !remerge.isEmpty, remerge.contains(key) {
      defer { ancestors[key] = remote.isDeleted ? nil : remote }
      if pending != nil, let local = store[key], !local.isDeleted, !remote.isDeleted {
        var merged = env.policy.resolveConflict(client: local, server: remote, ancestor: ancestors[key], context: env.context)
        merged.changeTag = remote.changeTag
        setLocal(merged, for: key, effects: &effects)
        return
      }
      remerge.remove(key)
    }
    // With nothing pending, a `StandardPolicy` takes the server's copy as it is: the local copy
    // is not read (nor copied) for it.
    let result =
      pending == nil && env.takesRemoteWhenNothingPending
      ? remote : env.policy.deviceApply(remote: remote, local: store[key], pending: pending, context: env.context)
    if result.isDeleted && pending == nil {
      setLocal(nil, for: key, effects: &effects)
    } else {
      setLocal(result, for: key, effects: &effects)
    }
  }

  /// A record `record` refers to that is not on this device at all (neither live nor
  /// deleted), or nil.
  func missingParent(of record: RecordState, rules: SchemaRules) -> RecordKey? {
    for (field, _) in rules.refFields[Int(record.type)] {
      if case .ref(let parent) = record.fields[Int(field)].value, !store.contains(parent), knownDeletes[parent] == nil { return parent }
    }
    return nil
  }

  /// In ``knownDeletes``: gone without the device seeing the delete (with the zone, or missing
  /// from a refetch); the world finds the delete intent, if any.
  package static let unknownDelete: IntentID = -1

  /// Takes the records to check for duplicates (``dedupeChecks``).
  package mutating func takeDedupeChecks() -> [RecordKey] {
    defer { dedupeChecks = [] }
    return dedupeChecks
  }

  /// Takes the records whose delete rules the world should run (``ruleChecks``).
  package mutating func takeRuleChecks() -> [(key: RecordKey, type: Int32)] {
    defer { ruleChecks = [] }
    return ruleChecks
  }

  /// Replaces the local copy, reporting a change in what the user sees (``DeviceEffect/shown(_:visible:)``).
  mutating func setLocal(_ record: RecordState?, for key: RecordKey, effects: inout [DeviceEffect]) {
    let wasVisible = store.isLive(key)
    let isVisible = record.map { !$0.isDeleted } ?? false
    if wasVisible != isVisible { effects.append(.shown(key, visible: isVisible)) }
    store[key] = record
  }

  /// Takes in a copy of a record: the clocks observe its stamps, and with
  /// ``DeviceConfig/reportsCopies`` it is reported (``DeviceEffect/took(_:)``) for the oracle.
  mutating func take(_ record: RecordState, effects: inout [DeviceEffect]) {
    if config.reportsCopies { effects.append(.took(record)) }
    hlc.observe(record.stamp)
    if record.isDeleted { hlc.observe(record.deleteStamp) }
  }
}
