public enum ReplicaModule {}
