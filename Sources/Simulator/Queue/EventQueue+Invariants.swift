extension EventQueue {
  /// Traps unless every parent precedes its children and every sequence number is below the
  /// next one to be given. O(*n*); run in debug builds after mutations of small queues, and by tests.
  public func _checkInvariants() {
    for i in _storage.indices {
      precondition(_storage[i].sequence < _nextSequence, "EventQueue: sequence from the future")
      let left = 2 * i + 1
      let right = left + 1
      if left < _storage.count {
        precondition(!_storage[left]._precedes(_storage[i]), "EventQueue: heap order broken at \(i)")
      }
      if right < _storage.count {
        precondition(!_storage[right]._precedes(_storage[i]), "EventQueue: heap order broken at \(i)")
      }
    }
  }

  @usableFromInline
  func _checkInvariantsIfSmall() {
    if _storage.count <= 64 { _checkInvariants() }
  }
}
