// TetherReachability
