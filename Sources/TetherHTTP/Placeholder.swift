// TetherHTTP
