// TetherStore
