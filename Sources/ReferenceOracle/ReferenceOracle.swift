import Replica
import Simulator

/// Placeholder: the reference checker is being written.
public enum ReferenceOracle {}
