----------------------------- MODULE Inventory ------------------------------
(***************************************************************************)
(* A small warehouse that keeps a stock count for each kind of item.      *)
(* Items are shipped one unit at a time while in stock, and a restock     *)
(* refills an item to the shelf capacity.  The most recent event is kept  *)
(* as a record that names the kind of event, the item, and the stock      *)
(* level it left behind.  The module deliberately uses many definition    *)
(* forms: LET, RECURSIVE and LOCAL operators, a function definition, and  *)
(* records whose field names coincide with variable names.                *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Items,      \* the kinds of items kept in the warehouse
          Capacity    \* shelf capacity per item

VARIABLES stock,      \* stock[i] is the number of units of item i
          last        \* the most recent event, as a record

vars == <<stock, last>>

(* Events: "Ship" and "Restock" are spelled like the actions below.       *)
EventKinds == {"None", "Ship", "Restock"}

LOCAL Min(a, b) == IF a < b THEN a ELSE b

(* Sum of a finite sequence of numbers.                                   *)
RECURSIVE SumSeq(_)
SumSeq(s) == IF s = <<>> THEN 0 ELSE Head(s) + SumSeq(Tail(s))

(* For every item, how many units are missing from a full shelf.          *)
missing[i \in Items] == Capacity - stock[i]

(* Total number of units on the shelves, via a sequence of the counts.    *)
TotalStock ==
    LET RECURSIVE Collect(_)
        Collect(S) == IF S = {} THEN <<>>
                      ELSE LET i == CHOOSE x \in S : TRUE
                           IN  <<stock[i]>> \o Collect(S \ {i})
    IN  SumSeq(Collect(Items))

TypeOK == /\ stock \in [Items -> 0..Capacity]
          /\ last \in [kind : EventKinds, item : Items \cup {"none"},
                       stock : 0..Capacity]

Init == /\ stock = [i \in Items |-> Capacity]
        /\ last = [kind |-> "None", item |-> "none", stock |-> Capacity]

Ship(i) == LET Dec(n) == n - 1
               left   == Dec(stock[i])
           IN  /\ stock[i] > 0
               /\ stock' = [stock EXCEPT ![i] = left]
               /\ last' = [kind |-> "Ship", item |-> i, stock |-> left]

Restock(i) == /\ missing[i] > 0
              /\ stock' = [stock EXCEPT ![i] = Min(Capacity, stock[i] + missing[i])]
              /\ last' = [kind |-> "Restock", item |-> i, stock |-> Capacity]

Next == \E i \in Items : Ship(i) \/ Restock(i)

Spec == Init /\ [][Next]_vars

(* The shelves never hold more than their combined capacity.              *)
WithinCapacity == TotalStock <= Capacity * Cardinality(Items)

(* The last event record agrees with the current stock of its item.       *)
LastIsCurrent == last.kind # "None" => last.stock = stock[last.item]

(* A restock always leaves the shelf full.                                *)
RestockFills == last.kind = "Restock" => missing[last.item] = 0
=============================================================================
