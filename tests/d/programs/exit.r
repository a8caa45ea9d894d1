end ran

