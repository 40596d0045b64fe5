@_spi(Kernel) import Simulator

extension SyncWorld {
  /// Heals every fault — the server up, loss and duplication off, every device online and in
  /// the foreground — then syncs in rounds until every device has sent everything and fetched
  /// the server's latest change, or until the bound. A run that cannot settle is recorded in
  /// ``WorldFacts`` (the oracle reports it as divergence), never a hang.
  package mutating func settle(maxRounds: Int = 20, maxTime: SimDuration = .hours(1), maxEvents: Int = 5_000_000) {
    facts.settleStart = now
    let deadline = now + maxTime
    let eventLimit = loop.processedCount + maxEvents
    network.setUp(serverNode, true)
    for a in servers.indices { servers[a].endRules() }
    network.conditions.loss = .never
    network.conditions.duplication = .never
    trace.record(WorldTrace.settle, at: now, node: -1, 0, Int64(loop.pendingCount))
    note(.settleStarted)
    for d in devices.indices {
      network.setOnline(NodeID(index: d), true)
      deliverToDevice(Int32(d), .connectivity(true))
    }
    for round in 1...maxRounds {
      for d in devices.indices { deliverToDevice(Int32(d), .syncNow) }
      while loop.processedCount < eventLimit, let t = loop.nextTime, t <= deadline, let (_, event) = loop.next() { handle(event) }
      if isQuiescent {
        trace.record(WorldTrace.settle, at: now, node: -1, Int64(round), 0)
        note(.settled(rounds: round))
        let start = facts.settleStart ?? now
        facts.convergedAfter = max(lastDelivery, start) - start
        setAsideFacts()
        recordFinalState()
        return  // (a guard that tripped before settle keeps `settled` false)
      }
      if loop.processedCount >= eventLimit || now >= deadline { break }
    }
    setAsideFacts()
    facts.settled = false
    // Uploads still pending when settle gives up never reached the server: say so, per device.
    for d in devices.indices where devices[d].account != nil {
      let pending = devices[d].outbox.entries.filter { !$0.failed }.map(\.key)
      if !pending.isEmpty { record(.stalled(pending, waitingOn: devices[d].waitingOn?.error), device: Int32(d)) }
    }
    recordFinalState()
    if facts.unsettledReason != nil { return }  // already stopped before settle
    let stuck = devices.filter { !upToDate($0) }.map(\.config.name)
    facts.unsettledReason =
      "sync did not reach quiescence within \(maxRounds) rounds, \(maxTime) or \(maxEvents) events"
      + (stuck.isEmpty ? "" : " (still behind: \(stuck.joined(separator: ", ")))")
  }

  /// Changes still set aside with an account the device is not signed into when settle ends
  /// (`account=keep`): never sent, and said so.
  mutating func setAsideFacts() {
    for d in devices.indices {
      for (account, stash) in devices[d].stashes where account != devices[d].account {
        let unsent = stash.outbox.entries.filter { !$0.failed }.map(\.key)
        if !unsent.isEmpty { record(.setAside(unsent, account: account), device: Int32(d)) }
      }
    }
  }

  /// Every device idle with nothing sendable and up to date with the server, nothing in flight.
  package var isQuiescent: Bool {
    loop.pendingCount == 0 && devices.indices.allSatisfy { d in devices.withUnsafeBufferPointer { upToDate($0[d]) } }
  }

  /// Idle, and up to date with its account's server (a signed-out device syncs nothing).
  func upToDate(_ d: DeviceState) -> Bool {
    guard let a = d.account else { return true }
    guard d.isIdle && d.savedToken == servers[Int(a)].head else { return false }
    // With sharing, up to date with the account's shared database too.
    return !hasSharing || (d.sharedToken ?? 0) == sharing.heads[Int(a)]
  }
}
