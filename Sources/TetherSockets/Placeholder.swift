// TetherSockets
