public enum ScenariosModule {}
