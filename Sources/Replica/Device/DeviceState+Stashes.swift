extension DeviceState {
  /// The data a device set aside with each account it signed out of (`account=keep`), in the
  /// order it was set aside — the order settle reports what is still unsent there — found by
  /// account without a search: a device may have been signed into many accounts in turn.
  struct Stashes: Sendable, Sequence {
    /// In the order set aside; nil where one was taken back.
    private var entries: [(account: Int32, stash: Stash)?] = []
    /// Where each account's entry is in ``entries`` (looked up only, never iterated).
    private var position: [Int32: Int] = [:]
    /// How many entries are nil.
    private var holes = 0

    /// Sets `stash` aside with `account`, after the others, replacing what was set aside with it.
    mutating func setAside(_ stash: Stash, account: Int32) {
      _ = takeBack(account: account)
      position[account] = entries.count
      entries.append((account, stash))
    }

    /// What was set aside with `account`, removed; nil when nothing was.
    mutating func takeBack(account: Int32) -> Stash? {
      guard let i = position.removeValue(forKey: account), let entry = entries[i] else { return nil }
      entries[i] = nil
      holes += 1
      if holes > 16, holes * 2 > entries.count { compact() }
      return entry.stash
    }

    /// Drops the holes (keeping the order), so that the entries stay proportional to what is
    /// set aside.
    private mutating func compact() {
      entries = entries.filter { $0 != nil }
      holes = 0
      for (i, entry) in entries.enumerated() { position[entry!.account] = i }
    }

    /// What is set aside, in the order it was.
    func makeIterator() -> IndexingIterator<[(account: Int32, stash: Stash)]> {
      entries.compactMap { $0 }.makeIterator()
    }
  }
}

extension DeviceState {
  /// The change tag a save of `key` carries: that of the server copy the device last took in
  /// (its ancestor, kept under `save=if-unchanged`), or of its own copy (0: never on the server).
  package func knownTag(_ key: RecordKey) -> Int64 {
    ancestors[key]?.changeTag ?? store[key]?.changeTag ?? 0
  }
}
