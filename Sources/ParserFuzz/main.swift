print("fuzz")
